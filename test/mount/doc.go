// Package test (directory test/mount) holds the end-to-end tests of
// cairn's FUSE mount and of what must stay safe beside it: `cairn mount`
// in the foreground and as a daemon, job control files, ACLs, loop
// devices on a mounted image, hostile stores read through cat, verify
// and the mount, forget and prune while snapshots are mounted or read;
// and, to even out the three packages' running times, file archives
// (pxar), restore and tape.
//
// It is one of three end-to-end packages (test, test/mount,
// test/remote) that go test runs side by side; all are named test, so
// a test file moves between them unchanged. Their harness is
// test/e2e, which the test files call directly.
package test
