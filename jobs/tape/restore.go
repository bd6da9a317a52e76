package tape

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/cairnfs/cairn/store"
)

// RestoreOptions configure Restore.
type RestoreOptions struct {
	MediaSet  format.UUID // the media set to read (zero: the newest of Pool)
	Pool      string
	Store     string   // restore only snapshots of this datastore name ("" all)
	Snapshots []string // restore only these ("" all)
	Workers   int      // chunk check-and-insert goroutines (0: 4)
	Reporter  Reporter
	Logger    *slog.Logger
	// SnapshotKey, when set, gives the key a restored snapshot's chunks
	// are checked with, from its manifest as read from tape
	// (Store.SnapshotKey, which checks the manifest's signature): nil
	// for a plain snapshot; a *store.KeyMissingError leaves its encrypted
	// chunks to CRC and structure checks; another error fails the
	// snapshot.
	SnapshotKey func(store.Snapshot, *store.Manifest) (*crypt.Key, error)
}

// RestoreReport is what Restore did.
type RestoreReport struct {
	MediaSet      string           `json:"media_set"`
	Snapshots     []SnapshotResult `json:"snapshots"`
	Chunks        int64            `json:"chunks"` // inserted
	Bytes         int64            `json:"bytes"`
	ChunksPresent int64            `json:"chunks_present"` // already in the store
	// Of the encrypted chunks inserted: decrypted with their snapshot's
	// key and checked against their keyed digest, or checked without it
	// (CRC and structure).
	ChunksDecrypted  int64         `json:"chunks_decrypted"`
	ChunksWithoutKey int64         `json:"chunks_checked_without_key"`
	FilesRead        []string      `json:"files_read"` // TAPE:FILE of the chunk archives read
	Duration         time.Duration `json:"duration_ns"`
}

// Failed counts the snapshots that were not restored.
func (r *RestoreReport) Failed() int {
	n := 0
	for _, s := range r.Snapshots {
		if s.State == StateFailed {
			n++
		}
	}
	return n
}

// Refused counts the snapshot archives refused beside another archive
// of the same snapshot (those of a snapshot that failed count there).
func (r *RestoreReport) Refused() int {
	n := 0
	for _, s := range r.Snapshots {
		if s.State == StateFailed {
			continue
		}
		for _, c := range s.Archives {
			if c.State == ClaimRefused {
				n++
			}
		}
	}
	return n
}

// pendingSnapshot is a snapshot whose files are written and whose chunks
// are being restored.
type pendingSnapshot struct {
	ref      catalog.SnapshotRef
	w        SnapshotWriter
	chunks   []chunk.Digest
	res      int                // index in RestoreReport.Snapshots
	manifest manifestCopy       // the manifest's bytes
	m        *store.Manifest    // decoded and checked against the archive's files
	files    map[string]fileSum // what the archive's files hold
	key      *crypt.Key         // its chunks are checked with (nil: none)
	note     string             // how its encrypted chunks are checked (SnapshotResult.Encryption)
}

// Restore restores snapshots of a media set into sink: the snapshot
// archives first (their indexes tell which chunks are needed), then only
// the chunk archives holding chunks the sink lacks; every chunk's CRC
// and digest are checked before insert (an encrypted chunk's keyed
// digest when opt.SnapshotKey gives its snapshot's key, else its CRC and
// header: restorekeys.go). A snapshot is committed only when
// all its chunks are in the sink; otherwise it is removed and reported
// failed while the others go on.
func Restore(ctx context.Context, d *drive.Drive, sink Sink, opt RestoreOptions) (*RestoreReport, error) {
	start := time.Now()
	if opt.Reporter == nil {
		opt.Reporter = nopReporter{}
	}
	if opt.Workers <= 0 {
		opt.Workers = 4
	}
	set, err := pickSet(d, opt)
	if err != nil {
		return nil, err
	}
	r, err := media.OpenSet(d, set)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	claims, err := selectSnapshots(r, opt)
	if err != nil {
		return nil, err
	}
	rep := &RestoreReport{MediaSet: set.String()}
	opt.Reporter.SetPhase("snapshot archives")
	var pending []*pendingSnapshot
	for _, claim := range claims {
		p, err := restoreClaim(ctx, r, sink, claim, rep, opt)
		if err != nil {
			for _, p := range pending {
				p.w.Abort()
			}
			return rep, err
		}
		if p != nil {
			pending = append(pending, p)
		}
	}
	opt.Reporter.SetPhase("chunk archives")
	rs := newChunkRestore(r, sink, opt)
	if err := rs.run(ctx, pending, rep); err != nil {
		for _, p := range pending {
			p.w.Abort()
		}
		return rep, err
	}
	for _, p := range pending {
		res := &rep.Snapshots[p.res]
		if err := rs.complete(p, res); err != nil {
			p.w.Abort()
			res.State, res.Error = StateFailed, err.Error()
			opt.Reporter.Errorf("snapshot %s: %v", p.ref.Snapshot, err)
			continue
		}
		res.State = StateDone
		if res.Encryption != "" {
			opt.Reporter.Logf("snapshot %s: restored; %s", p.ref.Snapshot, res.Encryption)
		} else {
			opt.Reporter.Logf("snapshot %s: restored", p.ref.Snapshot)
		}
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

func pickSet(d *drive.Drive, opt RestoreOptions) (format.UUID, error) {
	if !opt.MediaSet.IsZero() {
		return opt.MediaSet, nil
	}
	inv, err := media.LoadInventory(d.Dir())
	if err != nil {
		return format.UUID{}, err
	}
	sets := inv.MediaSets(opt.Pool)
	if len(sets) == 0 {
		return format.UUID{}, fmt.Errorf("tape restore: no media set for pool %q: %w", opt.Pool, media.ErrUnknown)
	}
	return sets[len(sets)-1].UUID, nil
}

// selectSnapshots picks the catalogued snapshots to restore: for each,
// the archives that claim it (more than one on a tampered or damaged
// set), in tape order, and the snapshots in the tape order of their
// first archive.
func selectSnapshots(r *media.SetReader, opt RestoreOptions) ([][]catalog.SnapshotRef, error) {
	want := map[string]bool{}
	for _, s := range opt.Snapshots {
		want[s] = true
	}
	seq := map[format.UUID]int{}
	for i, m := range r.Members() {
		seq[m.Label.UUID] = i
	}
	refs := r.Catalog().SnapshotArchives()
	sort.SliceStable(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		if seq[a.Media] != seq[b.Media] {
			return seq[a.Media] < seq[b.Media]
		}
		return a.File < b.File
	})
	seen := map[string]int{} // snapshot: its claim in out
	var out [][]catalog.SnapshotRef
	for _, ref := range refs {
		if (opt.Store != "" && ref.Store != opt.Store) || (len(want) > 0 && !want[ref.Snapshot]) {
			continue
		}
		i, dup := seen[ref.Snapshot]
		switch {
		case !dup:
			seen[ref.Snapshot] = len(out)
			out = append(out, []catalog.SnapshotRef{ref})
		case out[i][0].Store != ref.Store:
			return nil, fmt.Errorf("tape restore: snapshot %s is on the media set for datastores %s and %s; choose one",
				ref.Snapshot, out[i][0].Store, ref.Store)
		default:
			out[i] = append(out[i], ref)
		}
	}
	for s := range want {
		if _, ok := seen[s]; !ok {
			return nil, fmt.Errorf("tape restore: snapshot %s is not on media set: %w", s, media.ErrUnknown)
		}
	}
	return out, nil
}

// copySnapshotFiles writes the files of a snapshot archive to w, hands
// the chunks of its indexes to add, keeps the manifest's bytes and
// records what each file holds in files (checkArchive).
func copySnapshotFiles(s *format.SnapshotArchiveReader, w SnapshotWriter, add func(chunk.Digest), manifest io.Writer,
	files map[string]fileSum) error {
	for {
		f, err := s.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if _, dup := files[f.Name]; dup {
			return fmt.Errorf("file %q: twice in the archive", f.Name)
		}
		out, err := w.Create(f.Name)
		if err != nil {
			return err
		}
		h := &fileHash{h: sha256.New()}
		dst := io.MultiWriter(out, h)
		scan := newDigestScanner(f.Name, add)
		switch {
		case scan != nil:
			dst = io.MultiWriter(out, scan)
		case f.Name == store.ManifestName:
			dst = io.MultiWriter(out, manifest)
		}
		_, err = io.Copy(dst, s)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err == nil && scan != nil {
			err = scan.Close()
		}
		if err != nil {
			return fmt.Errorf("file %s: %w", f.Name, err)
		}
		files[f.Name] = h.sum()
		if scan != nil {
			files[f.Name] = scan.sum()
		}
	}
}
