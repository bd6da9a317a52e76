package drive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

// DefaultCapacity is the size of a tape created without one (PBS's
// virtual drive default max-size).
const DefaultCapacity = 64 << 20

// MinCapacity is the smallest tape the drive creates.
const MinCapacity = 1 << 20

// Sentinel errors, matched with errors.Is.
var (
	ErrBusy      = errors.New("tape drive is in use by another process")
	ErrNoDrive   = errors.New("no such tape drive directory")
	ErrNoTape    = errors.New("no such tape")
	ErrExists    = errors.New("tape already exists")
	ErrEmpty     = errors.New("drive is empty (no tape loaded)")
	ErrBadLabel  = errors.New("bad tape label")
	ErrEndOfData = errors.New("end of recorded data")
	ErrPosition  = errors.New("position beyond the end of recorded data")
	ErrWriting   = errors.New("a tape file is still open for writing")
	ErrBadState  = errors.New("bad drive state file")
)

var labelRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._\-]{0,63}$`)

// CheckLabel reports whether s may name a tape.
func CheckLabel(s string) error {
	if !labelRE.MatchString(s) {
		return fmt.Errorf("%w %q: want letters, digits, '.', '_' or '-' (at most 64)", ErrBadLabel, s)
	}
	return nil
}

// Drive is an opened virtual tape drive. It is not safe for concurrent
// use; one process holds it at a time.
type Drive struct {
	dir     string
	lock    *os.File
	writing *FileWriter
}

type tapeStatus struct {
	Name string `json:"name"`
	Pos  int    `json:"pos"`
}

type driveStatus struct {
	CurrentTape *tapeStatus `json:"current_tape"`
}

type tapeIndex struct {
	Files   int   `json:"files"`
	MaxSize int64 `json:"max-size,omitempty"`
}

// Open opens the drive directory, which must exist (an empty directory is
// a new drive), and takes its lock, waiting while another process holds
// it until ctx is done.
func Open(ctx context.Context, dir string) (*Drive, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".drive.lck"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open drive: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock drive %s: %w", dir, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("drive %s: %w (%w)", dir, ErrBusy, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return &Drive{dir: dir, lock: f}, nil
}

// Dir returns the drive directory.
func (d *Drive) Dir() string { return d.dir }

// Close releases the drive lock. An open file writer is closed without an
// end marker, as a crash would leave it.
func (d *Drive) Close() error {
	if d.writing != nil {
		d.writing.Close()
	}
	if d.lock == nil {
		return nil
	}
	err := d.lock.Close()
	d.lock = nil
	return err
}

func (d *Drive) path(name string) string { return filepath.Join(d.dir, name) }

func (d *Drive) indexPath(label string) string { return d.path("tape-" + label + ".json") }

func (d *Drive) filePath(label string, n int) string {
	return d.path(fmt.Sprintf("tapefile-%d-%s.json", n, label))
}

// maxStateFile bounds the drive's JSON state files, which hold a few
// numbers and names.
const maxStateFile = 1 << 20

func readJSON(path string, v any) error {
	raw, err := store.ReadFileBounded(path, maxStateFile)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil // PBS treats an empty index as zero files
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w %s: %w", ErrBadState, path, err)
	}
	return nil
}

// writeJSON replaces path atomically (temp file + rename).
func writeJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (d *Drive) loadIndex(label string) (tapeIndex, error) {
	var idx tapeIndex
	if err := readJSON(d.indexPath(label), &idx); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return idx, fmt.Errorf("tape %s: %w", label, ErrNoTape)
		}
		return idx, fmt.Errorf("tape %s: %w", label, err)
	}
	if idx.Files < 0 {
		return idx, fmt.Errorf("tape %s: %w: %d files", label, ErrBadState, idx.Files)
	}
	return idx, nil
}

func (d *Drive) storeIndex(label string, idx tapeIndex) error {
	if err := writeJSON(d.indexPath(label), idx); err != nil {
		return fmt.Errorf("tape %s: store index: %w", label, err)
	}
	return nil
}

func (d *Drive) loadStatus() (driveStatus, error) {
	var st driveStatus
	err := readJSON(d.path("drive-status.json"), &st)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return st, err
	}
	return st, nil
}

func (d *Drive) storeStatus(st driveStatus) error {
	if err := writeJSON(d.path("drive-status.json"), st); err != nil {
		return fmt.Errorf("store drive status: %w", err)
	}
	return nil
}

// current returns the loaded tape's status and index.
func (d *Drive) current() (driveStatus, tapeIndex, error) {
	st, err := d.loadStatus()
	if err != nil {
		return st, tapeIndex{}, err
	}
	if st.CurrentTape == nil {
		return st, tapeIndex{}, ErrEmpty
	}
	idx, err := d.loadIndex(st.CurrentTape.Name)
	return st, idx, err
}

func (idx tapeIndex) capacity() int64 {
	if idx.MaxSize > 0 {
		return idx.MaxSize
	}
	return DefaultCapacity
}

// TapeInfo describes one tape of the drive.
type TapeInfo struct {
	Label    string
	Files    int
	Used     int64 // bytes in its files
	Capacity int64
	Loaded   bool
}

// CreateTape creates an empty, unlabelled tape of the given capacity
// (0: DefaultCapacity).
func (d *Drive) CreateTape(label string, capacity int64) error {
	if err := CheckLabel(label); err != nil {
		return err
	}
	if capacity == 0 {
		capacity = DefaultCapacity
	}
	if capacity < MinCapacity {
		return fmt.Errorf("tape %s: capacity %d bytes below the minimum %d", label, capacity, MinCapacity)
	}
	if _, err := os.Stat(d.indexPath(label)); err == nil {
		return fmt.Errorf("tape %s: %w", label, ErrExists)
	}
	idx := tapeIndex{}
	if capacity != DefaultCapacity {
		idx.MaxSize = capacity
	}
	return d.storeIndex(label, idx)
}

// RemoveTape deletes a tape and its files. The tape must not be loaded.
func (d *Drive) RemoveTape(label string) error {
	idx, err := d.loadIndex(label)
	if err != nil {
		return err
	}
	if st, _ := d.loadStatus(); st.CurrentTape != nil && st.CurrentTape.Name == label {
		return fmt.Errorf("tape %s: remove: tape is loaded", label)
	}
	for i := 0; i < idx.Files; i++ {
		if err := os.Remove(d.filePath(label, i)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("tape %s: %w", label, err)
		}
	}
	return os.Remove(d.indexPath(label))
}

// Tapes lists the drive's tapes, sorted by label.
func (d *Drive) Tapes() ([]TapeInfo, error) {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("list tapes: %w", err)
	}
	st, _ := d.loadStatus()
	var out []TapeInfo
	for _, e := range entries {
		name := e.Name()
		label, ok := strings.CutPrefix(name, "tape-")
		if !ok || !strings.HasSuffix(label, ".json") || !e.Type().IsRegular() {
			continue
		}
		label = strings.TrimSuffix(label, ".json")
		info, err := d.TapeInfo(label)
		if err != nil {
			return nil, err
		}
		info.Loaded = st.CurrentTape != nil && st.CurrentTape.Name == label
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out, nil
}

// TapeInfo describes one tape.
func (d *Drive) TapeInfo(label string) (TapeInfo, error) {
	idx, err := d.loadIndex(label)
	if err != nil {
		return TapeInfo{}, err
	}
	used, err := d.usedBytes(label, idx.Files)
	if err != nil {
		return TapeInfo{}, err
	}
	return TapeInfo{Label: label, Files: idx.Files, Used: used, Capacity: idx.capacity()}, nil
}

// usedBytes sums the sizes of the first n files of a tape.
func (d *Drive) usedBytes(label string, n int) (int64, error) {
	var used int64
	for i := 0; i < n; i++ {
		fi, err := os.Stat(d.filePath(label, i))
		if err != nil {
			return 0, fmt.Errorf("tape %s file %d: %w", label, i, err)
		}
		used += fi.Size()
	}
	return used, nil
}
