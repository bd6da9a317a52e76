package main

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sample makes a small tree: files, a setgid directory, a symlink.
func sample(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "a/b"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "a/x.go"), []byte("package x\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "a/b/run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Mkdir(filepath.Join(root, "g"), 0o755))
	must(t, os.Chmod(filepath.Join(root, "g"), 0o2750|fs.ModeSetgid))
	must(t, os.Symlink("../a/x.go", filepath.Join(root, "g/link")))
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// tarOf writes root as `tar -C root -cf - .` would: "./" names.
func tarOf(t *testing.T, root string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if d.Type()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		h.Name = "./" + rel
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(tw, f)
			return err
		}
		return nil
	}))
	must(t, tw.Close())
	return &buf
}

func lines(es []entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.String())
	}
	slices.Sort(out)
	return out
}

func TestManifestOfTreeAndTar(t *testing.T) {
	root := sample(t)
	tree, err := treeManifest(root)
	must(t, err)
	fromTar, err := tarManifest(tarOf(t, root))
	must(t, err)
	if a, b := lines(tree), lines(fromTar); !slices.Equal(a, b) {
		t.Fatalf("tree and tar manifests differ:\n%s\n--\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	want := []string{"a", "a/b", "a/b/run.sh", "a/x.go", "g", "g/link"}
	var got []string
	for _, e := range tree {
		got = append(got, e.path)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("paths %q, want %q", got, want)
	}
	for _, e := range tree {
		if e.path == "g" && e.mode != 0o2750 {
			t.Errorf("g: mode %o, want 2750", e.mode)
		}
		if e.path == "g/link" && (e.typ != "l" || e.link != "../a/x.go") {
			t.Errorf("g/link: %v", e)
		}
	}
}

// Every kind of difference a wrong restore could make changes a line.
func TestManifestSeesDifferences(t *testing.T) {
	for name, change := range map[string]func(root string) error{
		"content": func(r string) error { return os.WriteFile(filepath.Join(r, "a/x.go"), []byte("package y\n"), 0o644) },
		"mode":    func(r string) error { return os.Chmod(filepath.Join(r, "a/b/run.sh"), 0o644) },
		"target": func(r string) error {
			if err := os.Remove(filepath.Join(r, "g/link")); err != nil {
				return err
			}
			return os.Symlink("../a/b", filepath.Join(r, "g/link"))
		},
		"missing": func(r string) error { return os.Remove(filepath.Join(r, "a/b/run.sh")) },
		"type":    func(r string) error { return os.Remove(filepath.Join(r, "g/link")) },
	} {
		t.Run(name, func(t *testing.T) {
			root := sample(t)
			before, err := treeManifest(root)
			must(t, err)
			must(t, change(root))
			after, err := treeManifest(root)
			must(t, err)
			if slices.Equal(lines(before), lines(after)) {
				t.Fatalf("manifest unchanged after %s changed", name)
			}
		})
	}
}

func TestRowRatioAndWrong(t *testing.T) {
	ok := true
	bad := false
	cells := map[[2]string]*cell{
		{"s", "cairn"}:  {recs: []record{{WallS: 1, OK: &ok}, {WallS: 3, OK: &ok}, {WallS: 2, OK: &ok}}},
		{"s", "restic"}: {recs: []record{{WallS: 5, OK: &ok}}},
		{"s", "borg"}:   {recs: []record{{WallS: 4, OK: &ok}}},
		{"s", "casync"}: {wrong: true, recs: []record{{WallS: 0.1, OK: &bad}}},
	}
	r := row("s", "step", "s", []string{"restic", "borg", "casync"}, cells)
	for _, want := range []string{"2.00 s (1.00–3.00)", "borg 4.00 s", "2.00×", "WRONG RESULT"} {
		if !strings.Contains(r, want) {
			t.Errorf("row %q lacks %q", r, want)
		}
	}
	cells = map[[2]string]*cell{
		{"r", "cairn"}:  {recs: []record{{IOPS: 9000, OK: &ok}}},
		{"r", "restic"}: {recs: []record{{IOPS: 3000, OK: &ok}}},
	}
	if r := row("r", "", "r", []string{"restic"}, cells); !strings.Contains(r, "3.00×") {
		t.Errorf("IOPS row %q: want ratio 3.00×", r)
	}
}
