package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SnapIndexName is the snapshot index at the store's root: a cache of
// what a listing shows of each finished snapshot's manifest
// (ManifestSummary), so that listing a store of many snapshots reads no
// manifest that did not change. It is never the truth:
//   - an entry counts only while the manifest file is the one it was made
//     from: same inode, size, mtime and ctime (fileKey, from the stat a
//     listing makes anyway). Every writer replaces a manifest by temp +
//     rename (a new inode); an in-place write moves mtime and ctime;
//   - an entry is only made of a manifest whose ctime is older than
//     snapIndexSettle, so a later change cannot share its ctime ("racy
//     git": a change in the same clock tick as the stat);
//   - a file that does not decode, has another version, is too large, is
//     not a regular file or is writable or owned by another user is
//     ignored (one log line) and rebuilt;
//   - it is optional: a store the user cannot write lists without it.
//
// PBS skips names starting with a dot at the store's root.
const SnapIndexName = ".cairn-snapindex"

const (
	snapIndexVersion = 2 // 2: a blob's decoded size in a summary
	// maxSnapIndexFile and maxSnapIndexEntries bound the index (a
	// summary is about 150 bytes, with a mount's listing about 330): a
	// larger store caches the first entries, and a file that would be
	// too large is written without the listings.
	maxSnapIndexFile    = 32 << 20
	maxSnapIndexEntries = 100_000
	// notesRunes is how much of the notes' first line a summary keeps.
	notesRunes = 60
)

// errSnapIndexVersion: the index was written by another version of
// cairn; it is rebuilt without a warning (it is a cache).
var errSnapIndexVersion = errors.New("another version's snapshot index")

// snapIndexSettle is how old a manifest's ctime must be for an entry
// (a variable for tests).
var snapIndexSettle = 2 * time.Second

// fileKey identifies one version of a file: a replaced file has another
// inode, a rewritten one another ctime.
type fileKey struct {
	Ino   uint64 `json:"i"`
	Size  int64  `json:"s"`
	Mtime int64  `json:"m"` // ns
	Ctime int64  `json:"c"` // ns
}

func fileKeyOf(st *unix.Stat_t) fileKey {
	return fileKey{Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}

// ManifestSummary is what a snapshot listing shows of a manifest.
type ManifestSummary struct {
	Archives       []string `json:"a"`
	Size           uint64   `json:"z"`           // sum of the files' sizes
	CryptMode      string   `json:"c"`           // Manifest.CryptMode
	KeyFingerprint string   `json:"k,omitempty"` // short form
	Verify         string   `json:"v,omitempty"` // verify state (when HasVerify)
	HasVerify      bool     `json:"hv,omitempty"`
	StoredSize     *int64   `json:"ss,omitempty"` // chunk_upload_stats' compressed_size
	Notes          string   `json:"n,omitempty"`  // first line, cut to 60 runes
}

// SummarizeManifest is the summary of a decoded manifest.
func SummarizeManifest(m *Manifest) (ManifestSummary, error) {
	sum := ManifestSummary{Archives: []string{}, CryptMode: m.CryptMode()}
	for _, ar := range Archives(m) {
		sum.Archives = append(sum.Archives, ar.Name)
	}
	for _, f := range m.Files {
		sum.Size += f.Size
	}
	if vs, ok := m.VerifyState(); ok {
		sum.Verify, sum.HasVerify = vs.State, true
	}
	if st, ok := m.ChunkUploadStats(); ok {
		sum.StoredSize = &st.CompressedSize
	}
	var notes string
	if raw, ok := m.Unprotected["notes"]; ok && json.Unmarshal(raw, &notes) == nil {
		sum.Notes = FirstLine(notes, notesRunes)
	}
	fp, ok, err := m.KeyFingerprint()
	if ok {
		sum.KeyFingerprint = fp.Short()
	}
	return sum, err
}

// FirstLine is the first line of s, cut to n runes (… marks a cut).
func FirstLine(s string, n int) string {
	line, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > n {
		return string(r[:n-1]) + "…"
	} else if more {
		return line + " …"
	}
	return line
}

type snapIndexEntry struct {
	Manifest fileKey         `json:"f"`
	Summary  ManifestSummary `json:"m"`
	Listing  *SnapListing    `json:"l,omitempty"` // a mount's (snapindex_listing.go)
	// Group and Dir: the group directory's state and the snapshot
	// directory's d_ino when a mount last checked Manifest (and thus
	// Listing) by a stat (snapindex_group.go).
	Group *groupDirKey `json:"g,omitempty"`
	Dir   uint64       `json:"d,omitempty"`
}

type snapIndexFile struct {
	Version int                       `json:"version"`
	Entries map[string]snapIndexEntry `json:"entries"`
}

// SnapIndex is the snapshot index of one listing (not safe for
// concurrent use): Summary answers from it or reads the manifest, Save
// writes what changed.
type SnapIndex struct {
	s       *Store
	log     *slog.Logger
	old     map[string]snapIndexEntry
	new     map[string]snapIndexEntry
	settled int64 // ns: manifests whose ctime is before this may be cached
	dirty   bool
	Hits    int // summaries answered from the index
}

// OpenSnapIndex loads the store's snapshot index; a missing one is empty,
// an unusable one is logged and empty.
func (s *Store) OpenSnapIndex(log *slog.Logger) *SnapIndex {
	if log == nil {
		log = s.log
	}
	x := &SnapIndex{s: s, log: log, new: map[string]snapIndexEntry{},
		settled: time.Now().Add(-snapIndexSettle).UnixNano()}
	old, err := readSnapIndex(x.path())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, errSnapIndexVersion):
		log.Debug("snapshot index of another version; it is rebuilt", "file", x.path(), "err", err)
		x.dirty = true
	case errors.Is(err, fs.ErrPermission): // another user's store: list without
		log.Debug("snapshot index not readable", "file", x.path(), "err", err)
	case err != nil:
		log.Warn("snapshot index ignored; it is rebuilt", "file", x.path(), "err", err)
		x.dirty = true
	default:
		x.old = old
	}
	return x
}

func (x *SnapIndex) path() string { return filepath.Join(x.s.root, SnapIndexName) }

// readSnapIndex decodes the index file at path, refusing what this user
// did not write alone.
func readSnapIndex(path string) (map[string]snapIndexEntry, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	case st == nil || fi.Mode().Perm()&0o022 != 0:
		return nil, fmt.Errorf("writable by others (%v)", fi.Mode().Perm())
	case st.Uid != uint32(os.Geteuid()) && st.Uid != 0:
		return nil, fmt.Errorf("owned by uid %d", st.Uid)
	case fi.Size() > maxSnapIndexFile:
		return nil, fmt.Errorf("%d bytes, limit %d", fi.Size(), maxSnapIndexFile)
	}
	return decodeSnapIndex(json.NewDecoder(&limitedReader{f, maxSnapIndexFile}))
}

// decodeSnapIndex decodes {"version": N, "entries": {KEY: ENTRY, …}}
// entry by entry, counting them as they come.
func decodeSnapIndex(dec *json.Decoder) (map[string]snapIndexEntry, error) {
	if err := wantDelim(dec, '{'); err != nil {
		return nil, err
	}
	version := 0
	var out map[string]snapIndexEntry
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t {
		case "version":
			err = dec.Decode(&version)
		case "entries":
			out, err = decodeSnapEntries(dec)
		default:
			err = fmt.Errorf("unknown field %v", t)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := wantDelim(dec, '}'); err != nil {
		return nil, err
	}
	if version != snapIndexVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", errSnapIndexVersion, version, snapIndexVersion)
	}
	return out, nil
}

func decodeSnapEntries(dec *json.Decoder) (map[string]snapIndexEntry, error) {
	if err := wantDelim(dec, '{'); err != nil {
		return nil, err
	}
	out := map[string]snapIndexEntry{}
	for dec.More() {
		if len(out) >= maxSnapIndexEntries {
			return nil, fmt.Errorf("more than %d entries", maxSnapIndexEntries)
		}
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var e snapIndexEntry
		if err := dec.Decode(&e); err != nil {
			return nil, err
		}
		if e.Listing != nil {
			if err := e.Listing.check(); err != nil {
				return nil, fmt.Errorf("entry %v: %w", t, err)
			}
		}
		out[t.(string)] = e // object keys are strings
	}
	return out, wantDelim(dec, '}')
}

func wantDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err == nil && t != d {
		err = fmt.Errorf("want %v, got %v", d, t)
	}
	return err
}

// limitedReader fails a read past n bytes, so a file that grew while read
// is refused rather than cut.
type limitedReader struct {
	f *os.File
	n int64
}

func (r *limitedReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("longer than its limit")
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	n, err := r.f.Read(p)
	r.n -= int64(n)
	return n, err
}

// Summary returns the summary of finished snapshot si's manifest: the
// index's when its entry is of the manifest Snapshots found, else read
// from the manifest (ReadManifest's errors).
func (x *SnapIndex) Summary(si SnapshotInfo) (ManifestSummary, error) {
	key := si.String()
	if e, ok := x.old[key]; ok && si.manifest != (fileKey{}) && e.Manifest == si.manifest {
		x.Hits++
		x.keep(key, e)
		return e.Summary, nil
	}
	m, err := x.s.ReadManifest(si.Snapshot)
	if err != nil {
		return ManifestSummary{}, err
	}
	sum, err := SummarizeManifest(m)
	if err != nil {
		return sum, err
	}
	decoded := x.s.decodedBlobSizes(si.Snapshot, m, &sum)
	if decoded && si.manifest != (fileKey{}) && si.manifest.Ctime < x.settled {
		x.keep(key, snapIndexEntry{Manifest: si.manifest, Summary: sum})
		x.dirty = true
	}
	return sum, nil
}

func (x *SnapIndex) keep(key string, e snapIndexEntry) {
	if len(x.new) < maxSnapIndexEntries {
		x.new[key] = e
	}
}

// Save writes the index when it changed (temp + rename, no sync: it is a
// cache). With partial (a listing of part of the store) the old entries
// not looked at are kept; else they are dropped (their snapshots are
// gone). A store the user cannot write keeps its old index.
func (x *SnapIndex) Save(partial bool) {
	if partial {
		for k, e := range x.old {
			if _, ok := x.new[k]; !ok {
				x.keep(k, e)
			}
		}
	}
	if !x.dirty && len(x.new) == len(x.old) {
		return
	}
	if err := x.write(); err != nil {
		x.log.Debug("snapshot index not written", "file", x.path(), "err", err)
	}
}

func (x *SnapIndex) write() error { return writeSnapIndex(x.s.root, x.new) }

// writeSnapIndex writes entries as the index of the store at root (temp +
// rename), and sweeps the temporary files crashed writers left.
// summariesOnly is entries without what the mount adds (listing, group
// state, directory inode).
func summariesOnly(entries map[string]snapIndexEntry) map[string]snapIndexEntry {
	out := make(map[string]snapIndexEntry, len(entries))
	for k, e := range entries {
		out[k] = snapIndexEntry{Manifest: e.Manifest, Summary: e.Summary}
	}
	return out
}

// writeSnapIndex writes entries as root's index (temp + rename).
func writeSnapIndex(root string, entries map[string]snapIndexEntry) error {
	data, err := json.Marshal(snapIndexFile{Version: snapIndexVersion, Entries: entries})
	if err == nil && len(data) > maxSnapIndexFile {
		// The mounts' listings go first: the summaries stay.
		data, err = json.Marshal(snapIndexFile{Version: snapIndexVersion, Entries: summariesOnly(entries)})
	}
	if err != nil {
		return err
	}
	if len(data) > maxSnapIndexFile {
		return fmt.Errorf("%d bytes, limit %d", len(data), maxSnapIndexFile)
	}
	sweepSnapIndexTemps(root, time.Now().Add(-snapIndexTempAge))
	tmp, err := os.CreateTemp(root, SnapIndexName+snapIndexTemp+"*") // mode 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(root, SnapIndexName))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
