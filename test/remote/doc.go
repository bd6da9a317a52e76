// Package test (directory test/remote) holds the end-to-end tests of
// stores in object storage, against a real MinIO (internal/miniotest:
// one server per test process), and of the jobs that copy or clean a
// store: `cairn init --s3`, backups to S3 with the server stopped
// midway, two hosts on one bucket, `cairn sync` (local and S3, killed
// and from a mount's control file) and garbage collection (killed in
// each phase, bad and temporary files, from the mount, on S3).
//
// It is one of three end-to-end packages (test, test/mount,
// test/remote) that go test runs side by side; all are named test, so
// a test file moves between them unchanged. Their harness is
// test/e2e, which the test files call directly.
package test
