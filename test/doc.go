// Package test holds cairn's end-to-end tests: they build the real cairn
// binary and drive it as a user would, against real stores on disk and
// real FUSE mounts. The benchmark harness that compares cairn with its
// peers lives in test/bench.
package test
