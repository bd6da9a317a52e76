package setup

import (
	"context"
	"log/slog"
	"time"

	"github.com/cairnfs/cairn/serve/metrics"
)

// TextfileEvery is how often Textfile writes the metrics.
const TextfileEvery = 15 * time.Second

// Textfile writes m to path (temporary file and rename) now, every
// every, and once more when ctx ends, for node_exporter's textfile
// collector. A failed write is logged once until one succeeds.
func Textfile(ctx context.Context, m *metrics.Metrics, path string, every time.Duration, log *slog.Logger) {
	failing := false
	write := func() {
		err := m.WriteTextfile(path)
		switch {
		case err != nil && !failing:
			log.Error("metrics file not written", "path", path, "err", err)
		case err == nil && failing:
			log.Info("metrics file written again", "path", path)
		}
		failing = err != nil
	}
	write()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			write()
			return
		case <-t.C:
			write()
		}
	}
}
