// Package pxar owns the pxar archive format of Proxmox Backup Server, as
// defined by proxmox/pxar (src/format): the item types and their byte
// layout, the goodbye tables (SipHash-2-4 of each file name, laid out as a
// binary search tree in an array) that let a reader find a name in a
// directory without reading its siblings, and payload references into
// the separate payload stream of split (version 2) archives.
//
// It has four parts:
//
//   - Encoder writes an archive, either split into a metadata stream and a
//     payload stream (.mpxar / .ppxar, format version 2) or as one stream
//     (.pxar, version 1 layout). Entries of a directory are added in
//     byte-wise sorted name order (WithAnyOrder: in any order, no name
//     twice, as PBS writes tape snapshot archives); AddFileRef records a
//     file whose bytes the caller places in the payload stream itself
//     (incremental backups).
//   - Accessor reads an archive at random through io.ReaderAt: the root,
//     a name in a directory, a path, a streaming directory listing (in
//     goodbye table order, i.e. by name hash, or with ReadDirSorted in
//     stored order, which is name order unless written WithAnyOrder), an
//     entry's complete metadata and an io.ReaderAt over a file's
//     content. It reads only the few small regions a lookup needs. No
//     listing holds its directory: ReadDirSorted decodes the entries
//     front to back from the directory's content (a subdirectory's
//     goodbye item, looked up by hash, says where its content ends) and
//     can resume at the position of any of them (Pos, Seek: a cookie for
//     FUSE's readdir offsets); ReadDir reads the table a page at a time.
//     Entry.ID (the offset of the entry's FILENAME item, the target's for
//     hard links, 0 for the root) is stable and serves as an inode number.
//     Entry.Ref is a 32-byte handle from which Reload decodes the entry
//     again, for holders of many entries (the mount's inodes).
//   - For readers that decode a single stream front to back (tape
//     snapshot archives, jobs/tape/format): DecodeEntry decodes an ENTRY
//     item and GoodbyeTable rebuilds the GOODBYE item the Encoder writes
//     for a directory's entries, to check the one read.
//   - ACL conversion between the kernel's system.posix_acl_* xattr bytes
//     and pxar's ACL items.
//
// Walking a directory tree on disk into an Encoder is package walk below
// this one. Chunking and storing the streams is package store's job.
//
// Bad input never panics and never reads outside the streams: every
// decoding problem is an error wrapping ErrCorrupt that names the stream
// and the byte offset. Counts and sizes read from a stream are bounded by
// what the stream (or the directory) can hold before anything is
// allocated for them. A directory's goodbye table must be a search tree
// sorted by hash, and no name may occur twice in a directory
// (ErrDuplicate, naming the directory's path): listings check the whole
// table first, level by level through a window per level of the tree
// (memory grows with its depth, never with the directory), comparing
// names only among items of equal hash, which are neighbours in sorted
// order (at most maxHashRun of them); a lookup checks the items it reads
// and the match's neighbours. A listing in stored order that ran from the
// start ends by checking that it decoded exactly the entries the table
// lists: their number, and a sum of a keyed hash (random per process) of
// each entry's name hash and offset against the same sum over the table,
// so a crafted table can neither hide an entry from lookups nor list one
// that is not there (one inside another entry, such as a directory
// shared by two parents). Restore, ls, cat and the mount all go through
// these checks. An entry of such a listing that does not decode is an
// error of its Next, and the listing can go on after it: an entry whose
// only fault is its name (ErrInvalidName) is decoded and stepped over as
// any other; a broken one (a corrupt item) is stepped over to the next
// position the goodbye table lists, at most maxSkips times a listing
// (each reads the whole table); an error of the table, of the end's
// check or of a read ends the listing (SortedDirReader.Err). The Walker
// reports each with its directory and goes on, as cairn dump does.
package pxar
