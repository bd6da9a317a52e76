package verify

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
)

// item is one chunk to verify.
type item struct {
	d         chunk.Digest
	size      int64
	encrypted bool
	key       *crypt.Key // the snapshot's key; nil: checked without one
	kref      keyRef
	file      string // the index that named it first, for messages
	inode     uint64
	statFail  bool
}

// verifySnapshot checks one snapshot and records its verify state.
func (v *verifier) verifySnapshot(ctx context.Context, j *jobs.Job, snap store.Snapshot, order string) {
	res := SnapshotResult{Snapshot: snap.String(), Group: snap.Group.String(), State: SnapOK}
	fail := func(damaged bool, format string, args ...any) {
		msg := res.fail(format, args...)
		res.Damaged = res.Damaged || damaged
		j.Errorf("%s: %s", snap, msg)
	}
	lock, err := v.s.LockSnapshot(ctx, snap, false)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			j.Logf("%s: removed before it was verified (forgotten or pruned), not verified", snap)
		} else {
			j.Errorf("%s: not verified: %v", snap, err)
		}
		return
	}
	defer lock.Unlock()
	m, err := v.s.ReadManifest(snap)
	if err != nil {
		if errors.Is(err, store.ErrUnfinished) {
			j.Logf("%s: manifest gone (removed while the job ran?), not verified", snap)
			return
		}
		fail(true, "manifest: %v", err)
		res.State = SnapFailed
		v.addResult(res)
		return
	}
	key := v.snapshotKey(snap, m)
	if key.err != nil {
		fail(true, "manifest: %v", key.err)
	}
	res.WithoutKey = key.missing
	if res.Encryption = key.note(m); res.Encryption != "" {
		j.Logf("%s: %s", snap, res.Encryption)
	}
	var items []item
	seen := map[chunk.Digest]int{}
	for _, f := range m.Files {
		if ctx.Err() != nil {
			return
		}
		if _, isIndex := index.Kind(f.Filename); !isIndex {
			if err := v.checkBlob(snap, f, key.key); err != nil {
				fail(true, "%v", err)
			}
			continue
		}
		if err := v.collect(snap, f, key, seen, &items); err != nil {
			fail(true, "%v", err)
		}
	}
	items, disagree := v.known(snap, items, fail, &res)
	if order == jobs.OrderInode {
		v.sortByInode(ctx, j, items)
	}
	bad := v.verifyChunks(ctx, j, items)
	for _, b := range bad {
		if b.index {
			disagree = append(disagree, b)
			continue
		}
		res.BadChunks++
		fail(false, "chunk %s (%s): %s", b.it.d, b.it.file, b.reason)
		v.noteAffected(b.it.d, snap)
	}
	reportDisagreements(disagree, fail)
	if ctx.Err() != nil && res.ErrorCount == 0 {
		return // not finished: the manifest keeps its previous state
	}
	if res.ErrorCount > 0 {
		res.State = SnapFailed
	}
	v.writeState(ctx, j, snap, res.State)
	v.addResult(res)
	if res.State == SnapOK {
		j.Logf("%s: ok", snap)
	}
}

// known drops chunks this job already judged; those found corrupt fail
// the snapshot at once. It returns the items left to verify and how the
// snapshot's indexes disagree with chunks known to be good.
func (v *verifier) known(snap store.Snapshot, items []item, fail func(bool, string, ...any), res *SnapshotResult) ([]item, []badChunk) {
	type earlier struct {
		it     item
		reason string
	}
	var bad []earlier
	var disagree []badChunk
	out := items[:0]
	v.mu.Lock()
	for _, it := range items {
		if i, ok := v.corrupt[it.d]; ok { // condemned, whatever the key
			c := &v.rep.Corrupt[i]
			c.Snapshots = append(c.Snapshots, snap.String())
			bad = append(bad, earlier{it, c.Reason})
			continue
		}
		if info := v.chunks[chunkRef{it.d, it.kref}]; info.state == chunkOK {
			if msg := disagreement(&it, info.facts); msg != "" {
				disagree = append(disagree, badChunk{it: it, reason: msg, index: true})
			}
			continue
		}
		out = append(out, it)
	}
	v.mu.Unlock()
	for _, b := range bad {
		res.BadChunks++
		fail(false, "chunk %s (%s): %s (found earlier in this job)", b.it.d, b.it.file, b.reason)
	}
	return out, disagree
}

// reportDisagreements fails the snapshot once per index whose entries
// disagree with good chunks (a manifest's wrong crypt mode makes every
// chunk of the index disagree): the first disagreement and their number.
func reportDisagreements(disagree []badChunk, fail func(bool, string, ...any)) {
	byFile := map[string][]badChunk{}
	var files []string
	for _, b := range disagree {
		if byFile[b.it.file] == nil {
			files = append(files, b.it.file)
		}
		byFile[b.it.file] = append(byFile[b.it.file], b)
	}
	slices.Sort(files)
	for _, f := range files {
		if bs := byFile[f]; len(bs) == 1 {
			fail(true, "%s", bs[0].reason)
		} else {
			fail(true, "%s (and %d more chunks of this index alike)", bs[0].reason, len(bs)-1)
		}
	}
}

// noteAffected adds snap to the snapshots a corrupt chunk affects.
func (v *verifier) noteAffected(d chunk.Digest, snap store.Snapshot) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if i, ok := v.corrupt[d]; ok {
		v.rep.Corrupt[i].Snapshots = append(v.rep.Corrupt[i].Snapshots, snap.String())
	}
}

// checkBlob checks a blob file against the manifest (size, SHA-256), its
// CRC and that it decodes: an encrypted one only with the snapshot's key
// (decrypted and its tag checked), else by CRC alone. A blob is decoded
// by its magic, as PBS's verify_blob does: the manifest lists a plain
// rsa-encrypted.key.blob of an encrypted backup as "encrypt".
func (v *verifier) checkBlob(snap store.Snapshot, f store.FileInfo, key *crypt.Key) error {
	path := filepath.Join(v.s.SnapshotPath(snap), f.Filename)
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("blob %s: %w", f.Filename, err)
	}
	if uint64(fi.Size()) != f.Size {
		return fmt.Errorf("blob %s: %d bytes, manifest says %d", f.Filename, fi.Size(), f.Size)
	}
	if fi.Size() > chunk.MaxBlobSize {
		return fmt.Errorf("blob %s: %d bytes, larger than a blob may be", f.Filename, fi.Size())
	}
	blob, err := store.ReadFileBounded(path, chunk.MaxBlobSize)
	if err != nil {
		return fmt.Errorf("blob %s: %w", f.Filename, err)
	}
	if sum := store.CsumHex(sha256.Sum256(blob)); sum != f.Csum {
		return fmt.Errorf("blob %s: SHA-256 %s, manifest says %s", f.Filename, sum, f.Csum)
	}
	kind, err := chunk.CheckCRC(blob)
	if err != nil {
		return fmt.Errorf("blob %s: %w", f.Filename, err)
	}
	if !kind.Encrypted() || key != nil {
		data, err := chunk.DecodeBlobKey(nil, blob, key, 0)
		clear(data)
		if err != nil {
			return fmt.Errorf("blob %s: %w", f.Filename, err)
		}
	}
	return nil
}

// csummer is implemented by both index types.
type csummer interface{ ComputeCsum() [32]byte }

// collect checks an index against the manifest (checksum in its header
// and over its entries, size) and adds its chunks not seen yet to items,
// to be checked with the snapshot's key.
// A chunk the snapshot's indexes list with two sizes or crypt modes fails
// the snapshot (one of the entries is wrong; the chunk itself is judged
// by its content, once). seen maps a digest to its place in items.
func (v *verifier) collect(snap store.Snapshot, f store.FileInfo, key snapKey, seen map[chunk.Digest]int, items *[]item) error {
	x, err := v.openIndex(snap, f)
	if err != nil {
		return err
	}
	defer x.Close()
	if cs, ok := x.(csummer); ok {
		got, want := cs.ComputeCsum(), x.Csum()
		if err := x.Err(); err != nil {
			return fmt.Errorf("index %s: %w", f.Filename, err)
		}
		if got != want {
			return fmt.Errorf("index %s: %w: entries hash to %s, header and manifest say %s",
				f.Filename, index.ErrFormat, store.CsumHex(got), store.CsumHex(want))
		}
	}
	enc := f.CryptMode == "encrypt"
	var conflicts []string
	for i := 0; i < x.Len(); i++ {
		d, start, end := x.Chunk(i)
		if k, ok := seen[d]; ok {
			if first := &(*items)[k]; first.size != end-start || first.encrypted != enc {
				conflicts = append(conflicts, fmt.Sprintf("entry %d lists chunk %s with %d bytes%s, an earlier entry of %s with %d bytes%s",
					i, d, end-start, cryptNote(enc), first.file, first.size, cryptNote(first.encrypted)))
			}
			continue
		}
		seen[d] = len(*items)
		*items = append(*items, item{d: d, size: end - start, encrypted: enc, key: key.key, kref: key.ref, file: f.Filename})
	}
	if err := x.Err(); err != nil {
		return fmt.Errorf("index %s: %w", f.Filename, err)
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("index %s: %w: %d entries disagree with an earlier entry of the same chunk (first: %s)",
			f.Filename, index.ErrFormat, len(conflicts), conflicts[0])
	}
	return nil
}

// openIndex opens an index file of snap and checks it against the
// manifest entry f (checksum and size), as OpenSnapshotIndex does, also
// for a snapshot whose key the store lacks: its index is plain.
func (v *verifier) openIndex(snap store.Snapshot, f store.FileInfo) (index.Index, error) {
	x, err := v.s.OpenIndexFile(snap, f.Filename)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("index %s: missing: %w", f.Filename, err)
		}
		return nil, fmt.Errorf("index %s: %w", f.Filename, err)
	}
	if sum := store.CsumHex(x.Csum()); sum != f.Csum || uint64(x.Size()) != f.Size {
		x.Close()
		return nil, fmt.Errorf("index %s: %w: checksum %s size %d, manifest says %s size %d",
			f.Filename, index.ErrFormat, sum, x.Size(), f.Csum, f.Size)
	}
	return x, nil
}

func cryptNote(encrypted bool) string {
	if encrypted {
		return " (encrypted)"
	}
	return ""
}

// maxStatLog bounds the stat failures logged one by one.
const maxStatLog = 10

// sortByInode stats every chunk and sorts by inode, chunks whose stat
// failed last (they are reported, and fail when read).
func (v *verifier) sortByInode(ctx context.Context, j *jobs.Job, items []item) {
	failed := 0
	for i := range items {
		if ctx.Err() != nil {
			return
		}
		info, err := v.s.StatChunk(items[i].d)
		if err != nil {
			items[i].statFail = true
			if failed++; failed <= maxStatLog {
				j.Logf("stat: %v (sorted last)", err)
			}
			continue
		}
		items[i].inode = info.Inode
	}
	if failed > maxStatLog {
		j.Logf("stat failed for %d chunks in all (sorted last)", failed)
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if a.statFail != b.statFail {
			if a.statFail {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.inode, b.inode)
	})
}
