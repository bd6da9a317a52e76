package restore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkTreeRestore restores a tree of 4000 small files in 200
// directories (2-64 KiB each) from an in-memory archive: the per-entry
// cost of creating, writing and setting metadata.
//
//	go test ./jobs/restore -run xxx -bench TreeRestore -benchtime 3x
func BenchmarkTreeRestore(b *testing.B) {
	src := b.TempDir()
	var total int64
	for i := range 4000 {
		dir := filepath.Join(src, fmt.Sprintf("d%03d", i%200), fmt.Sprintf("e%d", i%3))
		os.MkdirAll(dir, 0o755)
		data := randBytes(2048+(i*977)%(62<<10), uint64(i))
		total += int64(len(data))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	acc, _, _ := archive(b, src)
	out := b.TempDir()
	b.SetBytes(total)
	n := 0
	for b.Loop() {
		n++
		dst := filepath.Join(out, fmt.Sprint(n))
		if _, err := Tree(context.Background(), acc, acc.Root(), "", dst, TreeOptions{Threads: 2}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(dst)
		b.StartTimer()
	}
}
