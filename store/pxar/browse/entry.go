package browse

import (
	"encoding/json"
	"fmt"
	"io"
	"os/user"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store/pxar"
)

// EntryJSON is one entry of a file archive as ls --json and find --json
// print it.
type EntryJSON struct {
	Path        string `json:"path"`
	Type        string `json:"type"`
	Mode        uint64 `json:"mode"`
	Permissions string `json:"permissions"`
	UID         uint32 `json:"uid"`
	GID         uint32 `json:"gid"`
	User        string `json:"user,omitempty"`
	Group       string `json:"group,omitempty"`
	Size        uint64 `json:"size"`
	Mtime       string `json:"mtime"`
	Target      string `json:"target,omitempty"`
	Hardlink    string `json:"hardlink,omitempty"`
	Major       uint64 `json:"major,omitempty"`
	Minor       uint64 `json:"minor,omitempty"`
}

// Listing is the one document ls --json and find --json print; its
// entries are streamed (see JSONListing).
type Listing struct {
	Snapshot string      `json:"snapshot"`
	Archive  string      `json:"archive"`
	Path     string      `json:"path"`
	Entries  []EntryJSON `json:"entries"`
	Errors   []PathError `json:"errors"`
}

// PathError is a path that could not be listed.
type PathError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// entryType names an entry's type as --json does.
func entryType(e *pxar.Entry) string {
	switch {
	case e.Kind == pxar.KindDevice && e.Metadata.Stat.Mode&pxar.ModeIFMT == pxar.ModeIFBLK:
		return "block_device"
	case e.Kind == pxar.KindDevice:
		return "char_device"
	}
	return e.Kind.String()
}

// entrySize is a regular file's content size, 0 for other entries.
func entrySize(e *pxar.Entry) uint64 {
	if e.Kind == pxar.KindFile {
		return e.Size
	}
	return 0
}

func mtimeOf(e *pxar.Entry) time.Time {
	st := e.Metadata.Stat
	return time.Unix(st.Mtime.Secs, int64(st.Mtime.Nanos)).UTC()
}

// EntryJSON describes e, at path, with o's names.
func (o *Owners) EntryJSON(e *pxar.Entry, path string) EntryJSON {
	st := e.Metadata.Stat
	j := EntryJSON{Path: path, Type: entryType(e), Mode: st.Mode &^ pxar.ModeIFMT, Permissions: modeString(st.Mode),
		UID: st.UID, GID: st.GID, User: o.user(st.UID), Group: o.group(st.GID), Size: entrySize(e),
		Mtime: mtimeOf(e).Format(time.RFC3339Nano), Target: e.Target, Hardlink: e.Hardlink}
	if e.Kind == pxar.KindDevice {
		j.Major, j.Minor = e.Device.Major, e.Device.Minor
	}
	return j
}

// maxOwnerCache bounds the names remembered: a crafted archive may use
// any number of IDs.
const maxOwnerCache = 4096

// Owners maps user and group IDs to this host's names ("" when unknown),
// remembering what it looked up. A nil *Owners knows no names.
type Owners struct {
	users, groups map[uint32]string
}

// NewOwners returns an Owners that knows no name yet.
func NewOwners() *Owners { return &Owners{users: map[uint32]string{}, groups: map[uint32]string{}} }

func (o *Owners) user(id uint32) string {
	if o == nil {
		return ""
	}
	return o.lookup(o.users, id, func(s string) (string, error) {
		u, err := user.LookupId(s)
		if err != nil {
			return "", err
		}
		return u.Username, nil
	})
}

func (o *Owners) group(id uint32) string {
	if o == nil {
		return ""
	}
	return o.lookup(o.groups, id, func(s string) (string, error) {
		g, err := user.LookupGroupId(s)
		if err != nil {
			return "", err
		}
		return g.Name, nil
	})
}

func (o *Owners) lookup(cache map[uint32]string, id uint32, find func(string) (string, error)) string {
	if name, ok := cache[id]; ok {
		return name
	}
	name, err := find(strconv.FormatUint(uint64(id), 10))
	if err != nil {
		name = ""
	}
	if len(cache) < maxOwnerCache {
		cache[id] = name
	}
	return name
}

// WriteLong writes one ls -l style line: mode, owner and group (names
// from o when it knows them, else numbers), size (major, minor of a
// device), mtime in UTC, name and a symlink's target, names escaped.
func WriteLong(w io.Writer, o *Owners, e *pxar.Entry, name string) {
	st := e.Metadata.Stat
	size := strconv.FormatUint(entrySize(e), 10)
	if e.Kind == pxar.KindDevice {
		size = fmt.Sprintf("%d, %d", e.Device.Major, e.Device.Minor)
	}
	uid, gid := o.user(st.UID), o.group(st.GID)
	if uid == "" {
		uid = strconv.FormatUint(uint64(st.UID), 10)
	}
	if gid == "" {
		gid = strconv.FormatUint(uint64(st.GID), 10)
	}
	mtime := mtimeOf(e).Format("2006-01-02 15:04:05")
	fmt.Fprintf(w, "%s %5s %5s %12s %s %s", modeString(st.Mode), termsafe.Quote(uid), termsafe.Quote(gid), size, mtime, termsafe.Quote(name))
	if e.Kind == pxar.KindSymlink {
		fmt.Fprintf(w, " -> %s", termsafe.Quote(e.Target))
	}
	fmt.Fprintln(w)
}

// JSONListing streams a Listing: the header, then one entry at a
// time, then the errors, so that a listing of any size is one document
// in bounded memory.
type JSONListing struct {
	w          io.Writer
	n          int
	errors     []PathError
	errorBytes int
}

// maxListedErrors and maxErrorBytes bound the errors a listing keeps
// (paths nested 4096 deep may be megabytes long each).
const (
	maxListedErrors = 1000
	maxErrorBytes   = 4 << 20
)

// StartJSONListing writes the head of a listing of path in archive of
// snapshot to w.
func StartJSONListing(w io.Writer, snapshot, archive, path string) (*JSONListing, error) {
	head, err := json.Marshal(struct {
		Snapshot string `json:"snapshot"`
		Archive  string `json:"archive"`
		Path     string `json:"path"`
	}{snapshot, archive, path})
	if err != nil {
		return nil, err
	}
	_, err = fmt.Fprintf(w, "%s,\"entries\":[", head[:len(head)-1])
	return &JSONListing{w: w}, err
}

// Entry writes one entry.
func (l *JSONListing) Entry(j EntryJSON) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	sep := ",\n"
	if l.n == 0 {
		sep = "\n"
	}
	l.n++
	_, err = fmt.Fprintf(l.w, "%s%s", sep, b)
	return err
}

// Fail records a path that could not be listed (up to a bound).
func (l *JSONListing) Fail(path string, err error) {
	pe := PathError{Path: path, Error: err.Error()}
	if len(l.errors) < maxListedErrors && l.errorBytes+len(pe.Path)+len(pe.Error) <= maxErrorBytes {
		l.errors = append(l.errors, pe)
		l.errorBytes += len(pe.Path) + len(pe.Error)
	}
}

// Finish writes the errors and ends the document.
func (l *JSONListing) Finish() error {
	errs := l.errors
	if errs == nil {
		errs = []PathError{}
	}
	b, err := json.Marshal(errs)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(l.w, "\n],\"errors\":%s}\n", b)
	return err
}

// modeString renders a mode as ls does: type, then rwx for owner, group
// and others with setuid, setgid and sticky bits.
func modeString(mode uint64) string {
	b := []byte("?rwxrwxrwx")
	switch mode & pxar.ModeIFMT {
	case pxar.ModeIFREG:
		b[0] = '-'
	case pxar.ModeIFDIR:
		b[0] = 'd'
	case pxar.ModeIFLNK:
		b[0] = 'l'
	case pxar.ModeIFCHR:
		b[0] = 'c'
	case pxar.ModeIFBLK:
		b[0] = 'b'
	case pxar.ModeIFIFO:
		b[0] = 'p'
	case pxar.ModeIFSOCK:
		b[0] = 's'
	}
	for i := 0; i < 9; i++ {
		if mode&(1<<(8-i)) == 0 {
			b[1+i] = '-'
		}
	}
	special := func(bit uint64, at int, set, unsetX byte) {
		if mode&bit == 0 {
			return
		}
		if b[at] == 'x' {
			b[at] = set
		} else {
			b[at] = unsetX
		}
	}
	special(0o4000, 3, 's', 'S')
	special(0o2000, 6, 's', 'S')
	special(0o1000, 9, 't', 'T')
	return string(b)
}

// ShortPath shortens a path for a message: a crafted archive's paths can
// be megabytes long. The middle gives way to "…".
func ShortPath(p string) string {
	const keep = 256
	if len(p) <= 3*keep {
		return p
	}
	head, tail := keep, len(p)-2*keep
	for head > 0 && !utf8.RuneStart(p[head]) {
		head--
	}
	for tail < len(p) && !utf8.RuneStart(p[tail]) {
		tail++
	}
	return p[:head] + "…" + p[tail:]
}
