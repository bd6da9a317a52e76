package pbscheck

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Checker checks snapshots of one store. It remembers the chunks it
// found good, so that checking many snapshots of one group reads each
// shared chunk once (the pxar streams are still read whole).
type Checker struct {
	Store string
	// File, if not nil, is given each regular file's content of each
	// split archive (archive as NAME.pxar) as it is decoded.
	File func(archive, path string, size uint64, r io.Reader) error

	good map[[32]byte]bool
}

// Report is what Check found in a snapshot.
type Report struct {
	Snapshot  string // the directory checked
	Manifest  *Manifest
	Encrypted bool // some file's crypt-mode is encrypt: chunks checked for magic and CRC only, pxar not decoded
	Indexes   int
	Chunks    int // chunk references checked
	NewChunks int // of those, chunks this Checker had not checked before
	// Archives are the decoded split pxar archives by name (NAME.pxar).
	Archives map[string]*Archive
}

// CheckSnapshot checks one snapshot directory of the store with a new
// Checker.
func CheckSnapshot(store, snapDir string) (*Report, error) {
	return (&Checker{Store: store}).Check(snapDir)
}

// Check checks a snapshot directory (absolute, or relative to the
// store, as host/ID/TIME). Every problem found is in the error, each
// naming its file and offset; the report holds what could be read.
func (c *Checker) Check(snapDir string) (*Report, error) {
	if !filepath.IsAbs(snapDir) {
		snapDir = filepath.Join(c.Store, snapDir)
	}
	if c.good == nil {
		c.good = map[[32]byte]bool{}
	}
	rep := &Report{Snapshot: snapDir, Archives: map[string]*Archive{}}
	m, err := ReadManifest(snapDir)
	if err != nil {
		return rep, err
	}
	rep.Manifest = m
	var errs []error
	indexes := map[string]*Index{}
	for _, f := range m.Files {
		if f.CryptMode == "encrypt" {
			rep.Encrypted = true
		}
		x, err := c.checkFile(snapDir, f, rep)
		if err != nil {
			errs = append(errs, err)
		}
		if x != nil {
			indexes[f.Filename] = x
		}
	}
	// split pxar archives: both streams listed, decoded together
	var names []string
	for _, f := range m.Files {
		if base, ok := strings.CutSuffix(f.Filename, ".mpxar.didx"); ok {
			names = append(names, base)
		} else if base, ok := strings.CutSuffix(f.Filename, ".ppxar.didx"); ok {
			if _, ok := m.file(base + ".mpxar.didx"); !ok {
				errs = append(errs, fmt.Errorf("%s: %s has no %s.mpxar.didx beside it", snapDir, f.Filename, base))
			}
		}
	}
	sort.Strings(names)
	for _, base := range names {
		mf, _ := m.file(base + ".mpxar.didx")
		pf, ok := m.file(base + ".ppxar.didx")
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s.mpxar.didx has no %s.ppxar.didx beside it", snapDir, base, base))
			continue
		}
		if mf.CryptMode != pf.CryptMode {
			errs = append(errs, fmt.Errorf("%s: %s: the streams' crypt modes differ (%s, %s)", snapDir, base, mf.CryptMode, pf.CryptMode))
		}
		mx, px := indexes[mf.Filename], indexes[pf.Filename]
		if mx == nil || px == nil || mf.CryptMode == "encrypt" {
			continue
		}
		var opt DecodeOptions
		if c.File != nil {
			archive := base + ".pxar"
			opt.File = func(path string, size uint64, r io.Reader) error { return c.File(archive, path, size, r) }
		}
		a, err := DecodeSplit(OpenStream(c.Store, mx), OpenStream(c.Store, px), opt)
		if err == nil && (a.MetadataSize != mx.Size || a.PayloadSize != px.Size) {
			err = fmt.Errorf("decoded %d metadata and %d payload bytes of %d and %d", a.MetadataSize, a.PayloadSize, mx.Size, px.Size)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s.pxar: %w", snapDir, base, err))
		}
		rep.Archives[base+".pxar"] = a
	}
	return rep, errors.Join(errs...)
}

func (m *Manifest) file(name string) (FileInfo, bool) {
	for _, f := range m.Files {
		if f.Filename == name {
			return f, true
		}
	}
	return FileInfo{}, false
}

// checkFile checks one file the manifest lists: a blob by size and
// SHA-256 (and as a DataBlob), an index by index_csum and data size and
// each of its chunks.
func (c *Checker) checkFile(snapDir string, f FileInfo, rep *Report) (*Index, error) {
	path := filepath.Join(snapDir, f.Filename)
	csum, _ := hex.DecodeString(f.Csum)
	switch {
	case strings.HasSuffix(f.Filename, ".blob"):
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if sum := sha256.Sum256(b); uint64(len(b)) != f.Size || hex.EncodeToString(sum[:]) != f.Csum {
			return nil, fmt.Errorf("%s: %d bytes, SHA-256 %x; the manifest says %d bytes, %s", path, len(b), sum, f.Size, f.Csum)
		}
		kind, err := checkBlob(b)
		if err == nil && kind.encrypted() != (f.CryptMode == "encrypt") {
			err = fmt.Errorf("a %s DataBlob with crypt-mode %s", kind, f.CryptMode)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, nil
	case strings.HasSuffix(f.Filename, ".didx"), strings.HasSuffix(f.Filename, ".fidx"):
	default:
		return nil, fmt.Errorf("%s: listed in the manifest, neither blob nor index", path)
	}
	x, err := ReadIndex(path)
	if err != nil {
		return nil, err
	}
	rep.Indexes++
	if hex.EncodeToString(x.Csum[:]) != hex.EncodeToString(csum) || x.Size != f.Size {
		return nil, fmt.Errorf("%s: index_csum %x, size %d; the manifest says %s, %d", path, x.Csum, x.Size, f.Csum, f.Size)
	}
	var errs []error
	for i, ch := range x.Chunks {
		rep.Chunks++
		if c.good[ch.Digest] {
			continue
		}
		if err := c.checkChunk(ch, f.CryptMode == "encrypt"); err != nil {
			errs = append(errs, fmt.Errorf("%s: chunk %d (%x, bytes %d-%d): %w", path, i, ch.Digest, ch.Start, ch.End, err))
			continue
		}
		c.good[ch.Digest] = true
		rep.NewChunks++
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return x, nil
}

func (c *Checker) checkChunk(ch Chunk, encrypted bool) error {
	b, err := os.ReadFile(chunkPath(c.Store, ch.Digest))
	if err != nil {
		return err
	}
	if encrypted {
		kind, err := checkBlob(b)
		if err == nil && !kind.encrypted() {
			err = fmt.Errorf("a %s DataBlob in an encrypted index", kind)
		}
		return err
	}
	_, err = decodeChunk(b, ch.Digest, ch.End-ch.Start)
	return err
}
