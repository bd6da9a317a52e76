package backupsrc

import "strings"

// Spec is one NAME.ext:PATH of a backup; PATH "-" is standard input.
type Spec struct{ Name, Path string }

// IsPxar tells a directory tree (NAME.pxar).
func (s Spec) IsPxar() bool { return strings.HasSuffix(s.Name, ".pxar") }

// IsBlob tells a small file stored whole (NAME.blob).
func (s Spec) IsBlob() bool { return strings.HasSuffix(s.Name, ".blob") }

// IsStdin tells a source read from standard input.
func (s Spec) IsStdin() bool { return s.Path == "-" }
