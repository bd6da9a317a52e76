// Package filearchive connects pxar file archives to the datastore: it
// backs up a directory tree into a snapshot as a split pxar archive
// (NAME.mpxar.didx + NAME.ppxar.didx, or a single-stream NAME.pxar.didx
// in legacy mode) and opens such archives for random access.
//
// Streams are cut with the buzhash chunker and stored through the
// store's parallel Uploader (StreamWriter). Incremental backups follow
// PBS's metadata change detection: a file that is unchanged since the
// previous snapshot of the group is not read again; its PAYLOAD item is
// referenced inside the previous payload stream, whose chunks are
// injected into the new payload index as they are. Runs of such files
// whose chunks would carry too much unreferenced padding are read and
// written anew instead, as PBS does.
//
// pxar keeps no ctime or inode number, so each split archive has a
// companion stat table NAME.pxar.stat.didx (see stattable.go): one
// compact record per stored regular file with its inode, ctime and a
// content digest. A file counts as unchanged when its size, mtime, mode,
// owner, inode and ctime all equal the previous snapshot's; since the
// kernel moves ctime on every change of content, xattrs, ACLs, flags or
// ownership, its remaining metadata is then taken from the previous
// archive without opening the file. A file whose metadata changed but
// whose content digest did not (touch, chmod, rewritten with the same
// bytes) is read but its payload is still reused, so it does not break
// a run of reused chunks.
//
// In an encrypted backup (store.Backup.Encrypt) every stream's chunks
// are encrypted with the backup's key (StreamOptions.Key); the previous
// archive is a base only when it has the same key (store's rule), and it
// is read with that key, which the store must hold (Store.SetKeys).
// Archives of encrypted snapshots open through OpenSnapshotIndex, whose
// indexes carry their key to every reader (the pinned reader included).
//
// The pxar format and the tree walker are packages pxar and pxar/walk.
package filearchive
