package browse

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store/pxar"
)

// Complete lists the entries of the directory toComplete names up to
// its last slash whose names start with what follows it, as paths that
// keep toComplete's directory part; directories end in "/". Names a shell
// could not take back as typed (control characters, invalid UTF-8) are
// left out; at most limit are returned.
func Complete(ctx context.Context, acc *pxar.Accessor, toComplete string, limit int) ([]string, error) {
	dirPart, prefix := "", toComplete
	if i := strings.LastIndexByte(toComplete, '/'); i >= 0 {
		dirPart, prefix = toComplete[:i+1], toComplete[i+1:]
	}
	dir, err := acc.LookupPath(ctx, dirPart)
	if err != nil {
		return nil, err
	}
	r, err := acc.ReadDirSorted(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for len(out) < limit {
		e, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, err
		}
		if !strings.HasPrefix(e.Name, prefix) || termsafe.Quote(e.Name) != e.Name {
			continue
		}
		p := dirPart + e.Name
		if e.IsDir() {
			p += "/"
		}
		out = append(out, p)
	}
	return out, nil
}
