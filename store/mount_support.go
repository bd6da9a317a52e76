package store

import (
	"os"
	"path/filepath"
)

// HasNamespace reports whether namespace ns exists in the store (the root
// namespace always does).
func (s *Store) HasNamespace(ns NS) bool {
	if ns == "" {
		return true
	}
	fi, err := os.Stat(filepath.Join(s.root, ns.rel()))
	return err == nil && fi.IsDir()
}
