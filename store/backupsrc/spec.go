package backupsrc

import (
	"fmt"
	"slices"
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

// SpecForms names the forms a backup's source takes, for errors.
const SpecForms = "NAME.img:PATH (an image: a file, block device or - for standard input), " +
	"NAME.pxar:DIR (a directory tree) or NAME.blob:PATH (a small file, or -)"

// ParseSpecs reads a backup's NAME.ext:PATH arguments: the names must be
// plain, distinct and not reserved, a directory tree cannot come from
// standard input and at most one source reads it. Errors name the
// argument.
func ParseSpecs(args []string) ([]Spec, error) {
	var out []Spec
	stdin := ""
	for _, a := range args {
		name, path, ok := strings.Cut(a, ":")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("archive %q: want %s", a, SpecForms)
		}
		sp := Spec{Name: name, Path: path}
		if !strings.HasSuffix(name, ".img") && !sp.IsPxar() && !sp.IsBlob() {
			return nil, fmt.Errorf("archive %q: want %s", a, SpecForms)
		}
		if err := checkSpecName(name); err != nil {
			return nil, err
		}
		if sp.IsPxar() && sp.IsStdin() {
			return nil, fmt.Errorf("archive %q: a directory tree cannot come from standard input", a)
		}
		if sp.IsStdin() {
			if stdin != "" {
				return nil, fmt.Errorf("archives %s and %s both read standard input: only one may", stdin, name)
			}
			stdin = name
		}
		if slices.ContainsFunc(out, func(o Spec) bool { return o.Name == name }) {
			return nil, fmt.Errorf("archive %s given twice", name)
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
		return fmt.Errorf("archive name %q: want a plain file name (no \"/\", not starting with \".\")", name)
	case name == store.ManifestName:
		return fmt.Errorf("archive name %q is reserved for the snapshot's manifest", name)
	case name == "client.log.blob":
		return fmt.Errorf("archive name %q is reserved for PBS's client log", name)
	}
	return nil
}
