package tape

import (
	"context"
	"fmt"
	"hash"
	"io"
	"slices"
	"strings"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/format"
	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/cairnfs/cairn/store"
)

// Before a snapshot archive is restored, its content is checked against
// its own manifest (checkArchive): the manifest names the snapshot the
// archive claims, every file it lists is in the archive with the
// checksum and size it gives (an index's entries hash to its checksum),
// and the archive holds nothing else but the client log. A media set
// may hold several archives claiming one snapshot (a tampered tape, or
// one written again by hand): the first that verifies is restored, the
// others are checked too and reported with what became of them; when
// two verify and disagree, none is (no one can tell which is genuine).

// Archive claim states (ArchiveClaim.State).
const (
	ClaimRestored  = "restored"
	ClaimRefused   = "refused"   // its content does not verify
	ClaimDuplicate = "duplicate" // verifies, and lists the same files as the one restored
	ClaimConflict  = "conflict"  // verifies, and lists other files than another that verifies
)

// ArchiveClaim is one of several snapshot archives on the media set that
// claim the same snapshot.
type ArchiveClaim struct {
	Tape   string `json:"tape"` // label
	File   uint64 `json:"file"`
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// fileSum is what a file of a snapshot archive holds, for the checks
// against its manifest.
type fileSum struct {
	index      bool
	headerCsum [32]byte // an index's checksum as its header gives it
	sum        [32]byte // an index's entries' SHA-256; any other file's SHA-256
	size       uint64   // an index's data size; any other file's length
}

// fileHash hashes and counts a file as it is copied.
type fileHash struct {
	h hash.Hash
	n uint64
}

func (f *fileHash) Write(p []byte) (int, error) {
	f.n += uint64(len(p))
	return f.h.Write(p)
}

func (f *fileHash) sum() fileSum {
	s := fileSum{size: f.n}
	f.h.Sum(s.sum[:0])
	return s
}

// restoreClaim restores a snapshot from the first of the archives that
// claim it whose content verifies, and checks and reports the others.
// It returns nil when the snapshot is in the sink already or none of its
// archives can be restored (reported).
func restoreClaim(ctx context.Context, r *media.SetReader, sink Sink, claim []catalog.SnapshotRef, rep *RestoreReport,
	opt RestoreOptions) (*pendingSnapshot, error) {
	name := claim[0].Snapshot
	rep.Snapshots = append(rep.Snapshots, SnapshotResult{Snapshot: name})
	i := len(rep.Snapshots) - 1
	fail := func(err error) (*pendingSnapshot, error) {
		rep.Snapshots[i].State, rep.Snapshots[i].Error = StateFailed, err.Error()
		opt.Reporter.Errorf("snapshot %s: %v", name, err)
		return nil, nil
	}
	if ok, err := sink.HasSnapshot(name); err != nil || ok {
		if err != nil {
			return fail(err)
		}
		rep.Snapshots[i].State = StatePresent
		return nil, nil
	}
	if len(claim) == 1 {
		w, err := sink.NewSnapshot(ctx, name)
		if err != nil {
			return fail(err)
		}
		p, err := readArchive(ctx, r, sink, claim[0], w, opt, false)
		if err != nil {
			w.Abort()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return fail(err)
		}
		p.res, rep.Snapshots[i].Encryption = i, p.note
		return p, nil
	}
	p, claims, err := chooseArchive(ctx, r, sink, claim, opt)
	rep.Snapshots[i].Archives = claims
	for _, c := range claims {
		if c.State == ClaimRefused {
			opt.Reporter.Errorf("snapshot %s: tape %s file %d: not restored: %s", name, c.Tape, c.File, c.Reason)
		} else if c.State == ClaimDuplicate {
			opt.Reporter.Logf("snapshot %s: tape %s file %d: not restored: %s", name, c.Tape, c.File, c.Reason)
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return fail(err)
	}
	p.res, rep.Snapshots[i].Encryption = i, p.note
	return p, nil
}

// chooseArchive reads every archive of a claim: the first that verifies
// into the sink, the others to a discarding writer.
func chooseArchive(ctx context.Context, r *media.SetReader, sink Sink, claim []catalog.SnapshotRef,
	opt RestoreOptions) (*pendingSnapshot, []ArchiveClaim, error) {
	labels := map[format.UUID]string{}
	for _, m := range r.Members() {
		labels[m.Label.UUID] = m.Label.LabelText
	}
	var won *pendingSnapshot
	claims := make([]ArchiveClaim, len(claim))
	for k, ref := range claim {
		c := &claims[k]
		c.Tape, c.File = labels[ref.Media], ref.File
		var w SnapshotWriter = discardSnapshot{}
		if won == nil {
			var err error
			if w, err = sink.NewSnapshot(ctx, ref.Snapshot); err != nil {
				return nil, claims, err
			}
		}
		p, err := readArchive(ctx, r, sink, ref, w, opt, true)
		switch {
		case ctx.Err() != nil:
			w.Abort()
			if won != nil {
				won.w.Abort()
			}
			return nil, claims, ctx.Err()
		case err != nil:
			w.Abort()
			c.State, c.Reason = ClaimRefused, "its content does not verify: "+err.Error()
		case won == nil:
			won, c.State = p, ClaimRestored
		case slices.Equal(p.m.Files, won.m.Files):
			c.State, c.Reason = ClaimDuplicate, fmt.Sprintf("the same files as tape %s file %d, restored from there", labels[won.ref.Media], won.ref.File)
		default:
			c.State, c.Reason = ClaimConflict, fmt.Sprintf("verifies too, but lists other files than tape %s file %d", labels[won.ref.Media], won.ref.File)
		}
	}
	switch {
	case won == nil:
		return nil, claims, fmt.Errorf("none of the %d archives that claim it verifies", len(claim))
	case slices.ContainsFunc(claims, func(c ArchiveClaim) bool { return c.State == ClaimConflict }):
		won.w.Abort()
		return nil, claims, conflict(claims)
	}
	return won, claims, nil
}

// conflict marks the archive chosen first as in conflict too and says
// which archives disagree.
func conflict(claims []ArchiveClaim) error {
	var where []string
	for k, c := range claims {
		if c.State == ClaimRestored {
			claims[k].State = ClaimConflict
		}
		if claims[k].State == ClaimConflict {
			where = append(where, fmt.Sprintf("tape %s file %d", c.Tape, c.File))
		}
	}
	return fmt.Errorf("archives that verify and disagree claim it (%s): which is genuine cannot be told, none is restored",
		strings.Join(where, ", "))
}

// readArchive writes a snapshot archive's files to w, checks them
// against their manifest and collects the chunks its indexes need; with
// needChunks, also that every chunk is in the sink or on the media set.
func readArchive(ctx context.Context, r *media.SetReader, sink Sink, ref catalog.SnapshotRef, w SnapshotWriter,
	opt RestoreOptions, needChunks bool) (*pendingSnapshot, error) {
	p := &pendingSnapshot{ref: ref, w: w, files: map[string]fileSum{}}
	seen := map[chunk.Digest]bool{}
	add := func(d chunk.Digest) {
		if !seen[d] {
			seen[d] = true
			p.chunks = append(p.chunks, d)
		}
	}
	err := r.ReadSnapshotArchive(ref.Media, ref.File, func(s *format.SnapshotArchiveReader) error {
		if s.Snapshot != ref.Snapshot {
			return fmt.Errorf("%w: archive holds snapshot %s", media.ErrMismatch, s.Snapshot)
		}
		return copySnapshotFiles(s, w, add, &p.manifest, p.files)
	})
	if err == nil {
		err = checkArchive(p)
	}
	if err == nil && needChunks {
		for _, d := range p.chunks {
			if !r.Catalog().ContainsChunk(ref.Store, d) && !sink.HasChunk(d) {
				err = fmt.Errorf("chunk %s is neither on the media set nor in the store", d)
				break
			}
		}
	}
	if err == nil {
		p.key, p.note, err = findKey(p, opt)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// checkArchive checks an archive's files against its manifest (see the
// top of this file) and keeps the decoded manifest in p.m.
func checkArchive(p *pendingSnapshot) error {
	snap, err := ParseSnapshot(p.ref.Snapshot)
	if err != nil {
		return err
	}
	if _, ok := p.files[store.ManifestName]; !ok {
		return fmt.Errorf("the archive holds no %s", store.ManifestName)
	}
	m, err := store.ParseManifest(p.ref.Snapshot+"/"+store.ManifestName+" (tape)", p.manifest.Bytes(), snap)
	if err != nil {
		return err
	}
	listed := map[string]bool{store.ManifestName: true, clientLogName: true}
	for _, f := range m.Files {
		listed[f.Filename] = true
		got, ok := p.files[f.Filename]
		switch {
		case !ok:
			return fmt.Errorf("%s, listed in its manifest, is not in the archive", f.Filename)
		case got.index && (store.CsumHex(got.sum) != f.Csum || store.CsumHex(got.headerCsum) != f.Csum):
			return fmt.Errorf("index %s: its entries hash to %s, its header says %s, its manifest %s", f.Filename,
				store.CsumHex(got.sum), store.CsumHex(got.headerCsum), f.Csum)
		case store.CsumHex(got.sum) != f.Csum:
			return fmt.Errorf("%s: SHA-256 %s, its manifest says %s", f.Filename, store.CsumHex(got.sum), f.Csum)
		case got.size != f.Size:
			return fmt.Errorf("%s: size %d, its manifest says %d", f.Filename, got.size, f.Size)
		}
	}
	for name := range p.files {
		if !listed[name] {
			return fmt.Errorf("%q is in the archive but not in its manifest", name)
		}
	}
	p.m = m
	return nil
}

// discardSnapshot is a SnapshotWriter that keeps nothing: the archives
// of a claim after the one restored are read only to be checked.
type discardSnapshot struct{}

func (discardSnapshot) Create(name string) (io.WriteCloser, error) {
	if err := checkFileName(name); err != nil {
		return nil, err
	}
	return nopCloser{io.Discard}, nil
}
func (discardSnapshot) Commit() error { return nil }
func (discardSnapshot) Abort()        {}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
