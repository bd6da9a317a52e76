// Package miniotest runs a real MinIO server for tests: the binary from
// $CAIRN_MINIO, else `minio` in PATH, else $HOME/.cache/cairn/minio/minio
// (what .ci/run builds). Without one a test skips, unless
// CAIRN_TEST_REQUIRE_MINIO=1, when it fails.
//
// Start returns one server shared by the whole test process (started once,
// on 127.0.0.1 with a free port, a temporary data directory and random root
// keys); tests isolate themselves with a fresh bucket each (NewBucket).
// Fault tests that stop and restart the server use StartOwn: a server of
// their own, stopped when the test ends.
//
// The server runs under a small shell wrapper that reads the test
// process's end of a pipe: when the test process exits, even killed, the
// pipe closes and the wrapper stops MinIO and removes the shared data
// directory, so no server outlives its tests.
//
// Proxy (proxy.go) is a reverse proxy on loopback that delays every
// request, for tests and benchmarks of latency. Its watches (watch.go)
// tell a test when requests through it happened (PUTs stored, a request
// arrived, a server found unreachable) and can hold the requests after
// them, so that a test waits on the event instead of polling the
// bucket, and acts in the middle of a client's work at a point it
// chose.
package miniotest
