package cli

import (
	"fmt"

	"github.com/cairnfs/cairn/jobs/restore"
	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
)

// resolveArchiveIn is resolveArchive with the snapshot taken in
// namespace ns (--ns), as parseRefIn parses it.
func (a *app) resolveArchiveIn(s *store.Store, ns, ref, name string) (store.Snapshot, *store.Manifest, store.Archive, error) {
	r, err := parseRefIn(ns, ref)
	if err != nil {
		return store.Snapshot{}, nil, store.Archive{}, err
	}
	return a.resolveArchive(s, r.String(), name)
}

// imageInterrupted says what an interrupted image restore left: nothing
// at a file target (the temporary file was removed), a partial image on
// a device, a cut stream on stdout; with --json also as the summary.
func (a *app) imageInterrupted(o restoreOpts, sum restore.ImageSummary, t restore.Target, total int64) {
	sum.Interrupted = true
	var what string
	switch {
	case t.Stream != nil:
		sum.Left, what = "partial_stream", "the image written to stdout is incomplete"
	case t.File != nil && restore.IsDevice(sum.Target):
		sum.Left = "partial_device"
		what = "the device " + sum.Target + " holds a partial image (a device cannot be written under another name and renamed)"
	default:
		sum.Left, what = "nothing", sum.Target+" was not created (the partial file was removed)"
	}
	fmt.Fprintf(a.stderr, "restore interrupted after %s of %s: %s\n", humanize.IBytes(uint64(sum.Bytes)),
		humanize.IBytes(uint64(total)), what)
	if o.json {
		a.printRestore(o, sum, false) // on stderr when stdout carries the image
	}
}

// restoreBlob writes a blob archive's data to target: a file (under a
// temporary name, renamed when complete), a device, or "-" for stdout.
func (a *app) restoreBlob(o restoreOpts, s *store.Store, snap store.Snapshot, m *store.Manifest, ar store.Archive, target string) error {
	data, err := s.ReadBlob(snap, m, ar.Files[0])
	if err != nil {
		return err
	}
	t, closeTarget, err := restore.OpenTarget(target, a.stdout, o.force, !o.noSync)
	if err != nil {
		return err
	}
	w := t.Stream
	if w == nil {
		w = t.File
	}
	_, err = w.Write(data)
	if cerr := closeTarget(err == nil); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("restore %s to %s: %w", ar.Name, target, err)
	}
	a.printRestore(o, restore.ImageSummary{Snapshot: snap.String(), Archive: ar.Name, Target: target, Bytes: int64(len(data))}, true)
	return nil
}

// treeInterrupted reports an interrupted tree restore: where it stopped,
// what it did, and the marker it left; err wraps the context's error, so
// that the command exits as the signal says.
func (a *app) treeInterrupted(o restoreOpts, sum restore.TreeSummary, err error) error {
	sum.Interrupted = true
	if o.json {
		printJSON(a, sum)
	}
	left := "the restored tree is incomplete"
	switch {
	case sum.Marker != "":
		left += "; " + sum.Marker + " says so until a restore with --overwrite completes it"
	case sum.Removed:
		left = "the partial file " + sum.Target + " was removed"
	}
	fmt.Fprintf(a.stderr, "restore interrupted at %s after %d files, %d directories, %d other entries, %s: %s\n",
		sum.StoppedAt, sum.Files, sum.Dirs, sum.Others, humanize.IBytes(uint64(sum.Bytes)), left)
	return err
}
