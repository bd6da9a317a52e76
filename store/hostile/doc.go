// Package hostile crafts hostile input for tests: pxar archives that a
// careful encoder would never write (and other store files a careful
// writer would not write), stored as real snapshots of a real store, so
// that every reader (restore, ls, cat, the mount) can be tested against
// them.
//
// Encode writes a tree of Nodes as a split pxar archive byte for byte,
// without the encoder's checks: names may repeat within a directory, be
// empty, ".", "..", or hold '/' and NUL; children are stored in any
// order; hard links record any path and point to any earlier entry (or to
// none). Tricks lists the archives of known attacks on a restore as root
// (a symbolic link followed by a directory of the same name, hard links
// through symbolic links, to absolute and ".." paths, names that are
// paths, devices, FIFOs, trees deeper than PATH_MAX), Random combines
// them from a seed, and Store puts an archive into a snapshot.
//
// It is test support, used by tests only; nothing in cairn's commands
// imports it.
package hostile
