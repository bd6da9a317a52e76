// Package test holds cairn's end-to-end tests: they drive the command
// line as a user would, against real stores on disk and real FUSE
// mounts, in-process (cli.Run) where a command needs no process of its
// own, else in the real cairn binary (test/e2e's Cairn chooses). The benchmark harness that compares cairn with its
// peers lives in test/bench.
//
// The end-to-end tests are split into three packages, all named test so
// that a test file moves between them unchanged, which go test runs side
// by side (each is its own process with its own race-built binary and
// shared store; much of their time is spent waiting on the binary, FUSE
// and MinIO):
//
//   - test (this directory): the command line on local stores: init,
//     backup, browse, dump, diff, keys, progress, forget, restore
//     safety, the CLI contract (exit codes, signals, completion, man
//     pages), incremental file backups read by test/pbscheck (an
//     independent reader of PBS's formats);
//   - test/mount: FUSE mounts, hostile stores, prune, pxar, restore,
//     tape;
//   - test/remote: MinIO object storage, sync and GC.
//
// Their one harness (the binary's build, running a command in-process
// or in the binary, the shared store, data, mounts) is test/e2e, which
// the test files call directly (e2e.Cairn, e2e.MustCairn,
// e2e.SharedStore, …); each package's main_test.go only builds the
// binary (TestMain). Put a new file where its package's running time is
// shortest: `go test -json` gives each test's time.
package test
