package jobs

import (
	"errors"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "65536": 65536, "8k": 8 << 10, "8K": 8 << 10, "4M": 4 << 20, "4m": 4 << 20,
		"4MiB": 4 << 20, "4MB": 4 << 20, "4 MiB": 4 << 20, " 2G ": 2 << 30, "1T": 1 << 40,
		"1tib": 1 << 40, "1.5G": 3 << 29, "0.5k": 512, "512B": 512, "512b": 512,
		"4611686018427387904": 1 << 62, "4194304T": 1 << 62,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := []string{"", " ", "-1", "-4M", "1e99", "1e3", "abc", "4X", "4Mi", "4 M B", "..", ".", "1.2.3",
		"4611686018427387905", "4194305T", "99999999999999999999999", "4P", "4PB", "0x10", "NaN", "Inf", "+5", "4M4"}
	for _, in := range bad {
		if n, err := ParseSize(in); !errors.Is(err, ErrBadSize) {
			t.Errorf("ParseSize(%q) = %d, %v; want ErrBadSize", in, n, err)
		}
	}
}
