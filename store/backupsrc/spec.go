package backupsrc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cairnfs/cairn/store"
)

// Spec is one NAME.ext:PATH of a backup; PATH "-" is standard input.
type Spec struct{ Name, Path string }

// IsPxar tells a directory tree (NAME.pxar).
func (s Spec) IsPxar() bool { return strings.HasSuffix(s.Name, ".pxar") }

// IsBlob tells a small file stored whole (NAME.blob).
func (s Spec) IsBlob() bool { return strings.HasSuffix(s.Name, ".blob") }

// IsStdin tells a source read from standard input.
func (s Spec) IsStdin() bool { return s.Path == "-" }

// ErrBadSpec is what every error of ParseSpec and ParseSpecs wraps.
var ErrBadSpec = errors.New("bad backup source")

// SpecForms says what a source may be, for messages.
const SpecForms = "NAME.img:PATH (an image: a file, block device or - for standard input), " +
	"NAME.pxar:DIR (a directory tree) or NAME.blob:PATH (a small file, or -)"

// ParseSpec parses one NAME.img:PATH, NAME.pxar:DIR or NAME.blob:PATH
// as `cairn backup` takes it: the name a plain file name the store
// accepts, a tree never from standard input.
func ParseSpec(arg string) (Spec, error) {
	name, path, ok := strings.Cut(arg, ":")
	sp := Spec{Name: name, Path: path}
	if !ok || name == "" || path == "" || !strings.HasSuffix(name, ".img") && !sp.IsPxar() && !sp.IsBlob() {
		return Spec{}, fmt.Errorf("%w: archive %q: want %s", ErrBadSpec, arg, SpecForms)
	}
	if err := checkSpecName(name); err != nil {
		return Spec{}, err
	}
	if sp.IsPxar() && sp.IsStdin() {
		return Spec{}, fmt.Errorf("%w: archive %q: a directory tree cannot come from standard input", ErrBadSpec, arg)
	}
	return sp, nil
}

// ParseSpecs parses a backup's sources: each as ParseSpec, no name
// twice, at most one from standard input.
func ParseSpecs(args []string) ([]Spec, error) {
	var out []Spec
	stdin := ""
	for _, a := range args {
		sp, err := ParseSpec(a)
		if err != nil {
			return nil, err
		}
		if sp.IsStdin() {
			if stdin != "" {
				return nil, fmt.Errorf("%w: archives %s and %s both read standard input: only one may", ErrBadSpec, stdin, sp.Name)
			}
			stdin = sp.Name
		}
		for _, o := range out {
			if o.Name == sp.Name {
				return nil, fmt.Errorf("%w: archive %s given twice", ErrBadSpec, sp.Name)
			}
		}
		out = append(out, sp)
	}
	return out, nil
}

// checkSpecName refuses archive names the store would refuse only once
// the backup has begun, and the names of the snapshot's own blobs: the
// manifest and PBS's client log (which tape export adds beside the
// manifest's files).
func checkSpecName(name string) error {
	switch {
	case strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, "."):
		return fmt.Errorf("%w: archive name %q: want a plain file name (no \"/\", not starting with \".\")", ErrBadSpec, name)
	case name == store.ManifestName:
		return fmt.Errorf("%w: archive name %q is reserved for the snapshot's manifest", ErrBadSpec, name)
	case name == "client.log.blob":
		return fmt.Errorf("%w: archive name %q is reserved for PBS's client log", ErrBadSpec, name)
	}
	return nil
}
