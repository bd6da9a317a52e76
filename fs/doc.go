// Package fs owns cairn's FUSE filesystem: every finished snapshot of a
// store as one read-only tree, served on go-fuse's raw API
// (fuse.RawFileSystem) from a node table of its own, as low-level FUSE
// servers are.
//
//	<mnt>/[ns/<name>/…]<type>/<id>/<time>/<archive>
//	<mnt>/<type>/<id>/latest -> <newest time>
//	<mnt>/.stats                          cache and read counters (JSON; Options.StatusMode, 0400 by default)
//
// Images appear as one regular file of the image's size, blobs as their
// decoded content, and file archives (pxar) as directory trees once an
// ArchiveTree implementation is plugged in through Options.Trees.
// What each directory above the archives holds is package fs/layout's
// model, plain Go tested without a mount: the entries of namespaces,
// types, groups and snapshots, `latest`, a snapshot's archives from the
// snapshot index, when a listing is listed again and what a re-listing
// dropped or moved. This package makes nodes of its entries (layout.go)
// and serves its directories (dir.go, cachedir.go), telling the kernel
// which names went. Directories are listed lazily; the namespace, group
// and snapshot lists are re-read at most once per Options.Refresh, so
// new snapshots and a moved `latest` appear without a remount. The mount pins no snapshot:
// a forgotten or pruned one leaves it within about two Refresh periods
// (the kernel keeps the entries of these listings for Refresh, not for
// Options.Timeout, and the entries a re-listing finds gone are
// invalidated at once), `latest` moves back (the kernel caches symlink
// targets, FUSE_CACHE_SYMLINKS: a moved `latest` is a new inode, whose
// target the kernel asks for again), a removed group or
// namespace empties; files opened before keep reading, from their open
// index, until garbage collection removes the chunks. Inode numbers are a hash of the
// entry's path in the store, so they are stable across remounts. Every
// Options.StoreRefresh the mount has the store refresh what it keeps of
// snapshots written elsewhere (layout.Layout.RefreshStore: a remote
// store's mirror of its bucket, where other hosts back up); the listings
// then show it as above.
//
// Reads of an archive go through one shared chunkcache.Cache and a
// chunkcache.Reader per open file (per node in no-open mode), without a
// lock around I/O; a read within one chunk of an image is answered with
// the cached chunk's memory, held (chunkcache.Held) until go-fuse's server has written
// the reply (heldResult in file.go: its Slices make go-fuse call Done
// after the write), so that the buffer is not recycled under it; the kernel keeps file pages (FOPEN_KEEP_CACHE) and
// entries for long because snapshots never change; the directories of a
// snapshot (its archives, the trees of its file archives) are opened with
// FOPEN_CACHE_DIR, so a second listing costs no READDIR, while the
// changing listings are not (cachedir.go). As root, the store is
// a read-only mount in no-open and no-opendir mode (no OPEN, RELEASE,
// OPENDIR or RELEASEDIR; every listing cached by the kernel, the changing
// ones dropped at the end of each listing: noopendir.go) and extra
// entries (.jobs, jobs.go: fixedDirs, fixeddir.go) are mounted on their
// own, each with a node table of its own (submount.go, noopen.go).
// READDIRPLUS makes each entry's node from the entry the listing just
// decoded. A listing of a file archive's directory streams it
// (ArchiveTree.ReadDir, a DirStream): its offsets are the entries'
// positions in the archive, so a request at any offset (the kernel asking
// again from inside its last reply, a seekdir) resumes there at the cost
// of one lookup, an offset that is no entry's fails with EINVAL, and an
// open listing holds one decoded entry, never the directory (rawdir.go). Reading a file of a tree stores
// the next small files of its directory in the page cache (prefill.go). A corrupt or missing chunk fails the read that
// needs it with EIO and one log line; every other read goes on.
// An image's zero chunks are holes: SEEK_DATA and SEEK_HOLE and its
// st_blocks come from a bit per chunk of its index (sparse.go), so
// copies of it out of the mount are sparse.
// Every node the kernel holds is a slot of the mount's node table
// (rawtable.go), named by a node id the table makes (generation<<32 |
// slot), and every request is answered from it (raw.go, rawdir.go,
// rawfile.go; what would change something gets EROFS, rawrefuse.go): the
// table counts the kernel's lookups and drops a node at the FORGET that
// ends them; nothing of go-fuse's node API (package go-fuse/v2/fs) is
// used. A node of the mount's own (a directory or file of the layout, a
// file archive's root, .stats, a node of .jobs) has its Go value, a
// vnode (node.go), beside its slot, found again by inode number, so the
// kernel holds one node per inode (objtable.go). A looked-up entry below
// an archive's root is a 72-byte slot and nothing else (about 96 bytes of
// heap with its index, against about 525 as a node of go-fuse's node
// API): it keeps only the entry's TreeEntry.Ref (a TreeRef, a pxar.Ref's
// four words); its attributes and metadata are decoded again when asked
// for, and the slot goes when the kernel forgets the entry
// (Stats.TreeEntries counts these slots). Hard links share a slot and an
// inode number. A root is a vnode for its attributes and a directory of
// its tree for the rest; its open tree is shared by the entries below it
// and closed when neither the root nor any of them is held.
//
// A plain snapshot's listing comes from the snapshot index
// (store.ListingIndex, through fs/layout) while its manifest is the
// version it was made of, with its file archives' root attributes once a
// mount opened them and its images' bytes of data (st_blocks) once a
// mount stat'ed them (kept by the listing's layout.Archive for the rest
// of the mount too): a
// find over thousands of snapshots then reads no manifest and opens no
// archive; while a group's directory is unchanged its finished
// snapshots are not even stat'ed (store.Store.MountSnapshots; why that
// is sound: docs/design/store.md). Every open reads the manifest first
// (layout.Manifest), and data comes only through it and its checked
// indexes.
//
// Encrypted snapshots (PBS's client-side encryption) read through the
// keys the store was given (store.Store.SetKeys, cairn mount --keyfile),
// each with the key its manifest names; the mount decrypts as it reads
// and shows the same bytes as a plain snapshot's. A snapshot whose key
// the mount lacks is a directory answering EACCES, with one log line
// naming it and its key's short fingerprint; one whose manifest
// signature fails answers EIO (crypt.go). Plain snapshots of the same
// store read as ever.
//
// This package knows go-fuse's raw API (package go-fuse/v2/fuse), fs/layout
// and the store's API; it parses no on-disk format itself.
package fs
