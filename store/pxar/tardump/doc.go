// Package tardump owns writing a directory of a file archive as a PAX tar
// stream with all its metadata (cairn dump, cairn cat --tar): modes,
// numeric owners, times to the nanosecond, hard links, xattrs, file
// capabilities and ACLs; an entry no tar stream can hold is left out and
// reported, so the stream always ends as a valid tar.
package tardump
