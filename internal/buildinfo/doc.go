// Package buildinfo owns what a build of cairn says of itself: the
// version, Go version, platform and commit (with its time and whether
// the tree was dirty), from the values the Makefile sets with -ldflags -X
// or else from the build information Go records (Read, Info).
package buildinfo
