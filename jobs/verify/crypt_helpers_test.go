package verify

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/store"
)

var (
	newKey    = crypttest.NewKey
	keyedView = crypttest.KeyedView
)

// backupEncrypted writes an encrypted snapshot of g with data as disk.img
// and a blob.
func backupEncrypted(t testing.TB, s *store.Store, g store.Group, at time.Time, data []byte, key *crypt.Key) store.Snapshot {
	t.Helper()
	return crypttest.Backup(t, s, g, at, crypttest.Image{Data: data, Blobs: map[string][]byte{"notes.blob": []byte("notes of " + g.String())}}, key)
}

// encryptedChunks returns the distinct chunks of snap's image, failing
// unless all are encrypted.
func encryptedChunks(t testing.TB, s *store.Store, snap store.Snapshot) map[chunk.Digest]chunk.Kind {
	t.Helper()
	out := crypttest.Chunks(t, s, snap, "disk.img.fidx")
	for d, kind := range out {
		if !kind.Encrypted() {
			t.Fatalf("chunk %s of encrypted snapshot %s is a %s blob", d, snap, kind)
		}
	}
	return out
}

// checkNoKey fails when the key's bytes, raw or in hex, are in the
// job's status or log.
func checkNoKey(t testing.TB, st jobs.Status, j *jobs.Job, keys ...*crypt.Key) {
	t.Helper()
	js, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	text := string(js) + strings.Join(j.Log(), "\n")
	for _, k := range keys {
		raw := k.Export()
		if strings.Contains(text, string(raw)) || strings.Contains(strings.ToLower(text), hex.EncodeToString(raw)) {
			t.Errorf("the job's status or log holds key %s", k.Fingerprint().Short())
		}
		clear(raw)
	}
}

// snapResult returns snap's result in rep, failing the test without one.
func snapResult(t testing.TB, rep Report, snap store.Snapshot) SnapshotResult {
	t.Helper()
	r, ok := resultOf(rep, snap)
	if !ok {
		t.Fatalf("no result for %s in %+v", snap, rep.Snapshots)
	}
	return r
}
