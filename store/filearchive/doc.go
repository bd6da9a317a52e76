// Package filearchive connects pxar file archives to the datastore: it
// backs up a directory tree into a snapshot as a split pxar archive
// (NAME.mpxar.didx + NAME.ppxar.didx, or a single-stream NAME.pxar.didx
// in legacy mode) and opens such archives for random access.
//
// Streams are cut with the buzhash chunker and stored through the
// store's parallel Uploader (StreamWriter). Incremental backups follow
// PBS's metadata change detection: a file that is unchanged since the
// archive's reference (store.Backup.Reference: the group's newest
// snapshot that has the archive) is not read again; its PAYLOAD item is
// referenced inside the previous payload stream, whose chunks are
// injected into the new payload index as they are (run.go).
//
// Where cairn parts from PBS is the padding rule (liveness.go). PBS
// judges each run of unchanged files against the chunks that hold it
// and reads the run again past 10% padding; with 4 MiB chunks and
// changes scattered over a tree, nearly every run fails that test, so
// nearly every file is read and stored again (an incremental backup of
// Go's tree with 1% of its files changed stored 19 MB, restic 0.8 MB).
// cairn reuses every chunk that holds an unchanged file, injecting a
// chunk again after a changed file inside it when the files after that
// one need it: a chunk is stored once however many runs use it, so an
// incremental backup stores only the changed files, the metadata stream
// and the stat table. What bounds the padding is a rule for the whole
// snapshot, counted per distinct chunk: the bytes of reused chunks that
// no file uses are at most MaxPadding (default 25%) of those the files
// use, so a restore or a tar through the mount, which read each chunk
// once through the cache, read at most 1.25 times the file data (plus
// what changed since the previous backup). Past the bound, before the
// walk, the least used chunks of the previous snapshot are retired and
// their files read again into dense chunks. The payload index lists a
// chunk once per injection: its stream grows by the size of each chunk
// injected again, which PBS's sequential decoder skips over (offsets only
// move forward) and readers by offset never see.
//
// pxar keeps no ctime or inode number, so each split archive has a
// companion stat table NAME.pxar.stat.didx (see stattable.go): one
// compact record per stored regular file with its inode and ctime (and,
// on object storage, a digest of the content of a file under 1 MiB). A
// file counts as unchanged when its size, mtime, mode, owner, inode and
// ctime all equal the previous snapshot's; since the kernel moves ctime
// on every change of content, xattrs, ACLs, flags or ownership, its
// remaining metadata is then taken from the previous archive without
// opening the file. A file under 1 MiB whose metadata changed but whose
// size did not (touch, chmod, rewritten with the same bytes) is read and
// compared with its record's digest or, without one, with its previous
// content, where the chunks holding that are not much larger than the
// file (cheapToCompare); if it is the same, its payload is still reused.
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
