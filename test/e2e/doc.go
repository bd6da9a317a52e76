// Package e2e owns the fixtures that cairn's end-to-end test packages
// (test, test/mount, test/remote) share: building the race-enabled
// binary once per test process (Build, Main), running a command (Cairn,
// CairnStdin, MustCairn: in-process with cli.Run where the command needs
// no process of its own, see inProcess; else the binary, CairnBinary),
// the store shared by a process's tests
// (SharedStore), test data (RandBytes, SparseImage, WriteTree, Write,
// WritePass), FUSE mounts (NeedFUSE, MountStore, DaemonMount, WaitJob)
// and small file-system helpers (Files, Names, TmpfsDir).
//
// It is an ordinary package, not a test file, so that every end-to-end
// package can use it: their test files call it directly (e2e.Cairn,
// e2e.MustCairn, e2e.SharedStore, …), so a test file moves between
// those packages unchanged, and each one's TestMain calls Build and
// Main. The packages are split so that `go test` runs them side by side as
// separate processes: most of their time is spent waiting on the
// binary, FUSE and MinIO. Also here: CairnBounded (a minute's
// deadline), TreeListing, the tape and job-status helpers.
package e2e
