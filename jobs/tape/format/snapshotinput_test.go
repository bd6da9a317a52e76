package format

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cairnfs/cairn/store/pxar"
)

// lyingFS reports a size other than the content's for one file, as a
// file that changes while it is archived does.
type lyingFS struct {
	fstest.MapFS
	name  string
	delta int64
}

func (l lyingFS) Open(name string) (fs.File, error) {
	f, err := l.MapFS.Open(name)
	if err != nil || name != l.name {
		return f, err
	}
	return lyingFile{f, l.delta}, nil
}

type lyingFile struct {
	fs.File
	delta int64
}

func (f lyingFile) Stat() (fs.FileInfo, error) {
	fi, err := f.File.Stat()
	return lyingInfo{fi, f.delta}, err
}

type lyingInfo struct {
	fs.FileInfo
	delta int64
}

func (i lyingInfo) Size() int64 { return i.FileInfo.Size() + i.delta }

// Every file list or file the writer cannot archive faithfully is an
// error naming the file: a repeated name (the reader would refuse the
// archive), names pxar or a tape snapshot cannot hold, a directory, a
// file that shrank or grew between stat and read.
func TestSnapshotArchiveWriterRefuses(t *testing.T) {
	fsys, files := snapshotFS()
	fsys["dir"] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	long := strings.Repeat("x", 256)
	fsys[long] = &fstest.MapFile{Data: []byte("x")}
	for name, c := range map[string]struct {
		fsys  fs.FS
		files []string
		want  string
	}{
		"repeated name":   {fsys, append(files, files[1]), files[1]},
		"empty name":      {fsys, []string{""}, `""`},
		"dot":             {fsys, []string{"."}, `"."`},
		"dot dot":         {fsys, []string{".."}, `".."`},
		"slash":           {fsys, []string{"a/b"}, `"a/b"`},
		"NUL":             {fsys, []string{"a\x00b"}, `"a\x00b"`},
		"256 bytes":       {fsys, []string{long}, long},
		"directory":       {fsys, []string{"dir"}, `"dir"`},
		"missing":         {fsys, []string{"missing.blob"}, "missing.blob"},
		"file shrank":     {lyingFS{fsys, "root.pxar.didx", 10}, files, `"root.pxar.didx" shrank`},
		"file grew":       {lyingFS{fsys, "root.pxar.didx", -10}, files, `"root.pxar.didx" grew`},
		"empty file grew": {lyingFS{fsys, "index.json.blob", -int64(len(fsys["index.json.blob"].Data))}, files, `"index.json.blob" grew`},
	} {
		t.Run(name, func(t *testing.T) {
			_, w := newTape(0)
			_, done, err := WriteSnapshotArchive(w, "s", "vm/1/2024-01-01T00:00:00Z", c.fsys, c.files)
			if err == nil || done || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("done=%v err=%v, want an error naming %s", done, err, c.want)
			}
			if name == "repeated name" && !errors.Is(err, pxar.ErrDuplicate) {
				t.Fatalf("repeated name: %v", err)
			}
		})
	}
}
