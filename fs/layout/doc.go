// Package layout is the model of the tree a cairn mount shows of a store,
// above the archives' contents, in plain Go (no go-fuse: package fs
// turns its entries into nodes), so that it is tested without a mount:
//
//	<mnt>/[ns/<name>/…]<type>/<id>/<time>/<archive>
//	<mnt>/<type>/<id>/latest -> <newest time>
//
// Its files:
//
//   - entry.go: Entry, one name of a directory (its Kind, mode, size,
//     mtime and inode number, Ino: a hash of its path in the store,
//     stable across mounts), and what it leads to (a Dir, latest's
//     target, an Archive).
//   - dir.go: Dir, a directory's listing: sorted, listed again once older
//     than its ttl (never for a snapshot, whose content does not change),
//     which names a re-listing found gone or moved to another inode (a
//     forgotten snapshot, a moved latest), when it last changed; a failed
//     re-listing keeps the previous entries.
//   - layout.go: Layout, what one mount shares (the store, its snapshot
//     index, the refresh period), and the listers of namespaces, types
//     and groups; a group lists its finished snapshots (one in progress
//     is not shown) and latest, the newest of them, as a new inode
//     whenever it moves (the kernel caches symlink targets).
//   - snapshot.go: a snapshot's archives, from the snapshot index
//     (store.ListingIndex, .cairn-snapindex) while its manifest is the
//     version the listing was made of, else from the manifest (which the
//     index then keeps); Archive, one listed archive, with what a mount
//     learns of it (a file archive's root attributes, an image's bytes of
//     data) kept for the rest of the mount and in the index; Manifest, the
//     snapshot's manifest read and checked at the first open, through
//     which every read of data goes.
//   - refresh.go: RefreshStore, the store's refresh of what it keeps of
//     snapshots written elsewhere (a remote store's mirror).
//
// Why listing from the index is sound: docs/design/store.md.
package layout
