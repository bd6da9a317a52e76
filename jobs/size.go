package jobs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"
)

// ErrBadSize is the error of a size ParseSize refuses.
var ErrBadSize = errors.New("bad size")

// maxSize bounds every size: far above any chunk, cache or tape, far
// below where int64 arithmetic on it could overflow.
const maxSize = 1 << 62

// binarySuffix maps the suffixes cairn has always taken to humanize's IEC
// names: a single letter, KB/MB/… and KiB/MiB/… all mean powers of two,
// because chunk and cache sizes are (4M is 4 MiB; humanize alone would
// read 4M and 4MB as 4,000,000).
var binarySuffix = map[string]string{
	"": "B", "b": "B",
	"k": "KiB", "kb": "KiB", "kib": "KiB",
	"m": "MiB", "mb": "MiB", "mib": "MiB",
	"g": "GiB", "gb": "GiB", "gib": "GiB",
	"t": "TiB", "tb": "TiB", "tib": "TiB",
}

// ParseSize parses a byte size with an optional binary suffix: 65536,
// 64k, 64M, 2G, 1T, 64MiB, 64MB (MiB too), 1.5G; case and a space before
// the suffix do not matter. go-humanize parses the number and the IEC
// suffix it is mapped to. Sizes above 2^62 are refused.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, suffix := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	switch {
	case strings.HasPrefix(t, "-"):
		return 0, fmt.Errorf("size %q: %w: negative", s, ErrBadSize)
	case num == "" || strings.Count(num, ".") > 1 || num == ".":
		return 0, fmt.Errorf("size %q: %w: want a number with an optional k, M, G or T suffix (binary: 4M is 4 MiB)", s, ErrBadSize)
	}
	iec, ok := binarySuffix[suffix]
	if !ok {
		return 0, fmt.Errorf("size %q: %w: unknown unit %q; want k, M, G or T (binary: 4M is 4 MiB), or KiB, MiB, GiB, TiB", s, ErrBadSize, t[i:])
	}
	n, err := humanize.ParseBytes(num + " " + iec)
	if err != nil || n > maxSize {
		return 0, fmt.Errorf("size %q: %w: more than 2^62 bytes", s, ErrBadSize)
	}
	return int64(n), nil
}
