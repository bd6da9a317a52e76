// Package restore writes archives of a snapshot back out. It reads the
// store and never writes it.
//
// # Images
//
// Image writes an image to a file, a block device or a stream, with
// chunks fetched, decoded and checked by a pool of workers and written
// with positional writes (O_DIRECT where the file system takes it); all-
// zero chunks become holes. The caller opens the target: cairn's restore
// command writes a regular file under a temporary name beside it and
// renames it into place only when the restore finished, so no partial
// image ever has the target's name.
//
// An encrypted snapshot's index, opened by Store.OpenSnapshotIndex,
// carries its key (store.IndexKey): Image decrypts each chunk with it
// straight from the read buffer or mapping and checks the keyed digest;
// its zero chunks are known by the keyed digest of zeros. Without the key
// the index does not open (*store.KeyMissingError), so nothing is
// written. Trees of encrypted snapshots come through filearchive, whose
// readers decrypt the same way.
//
// # Trees
//
// Tree restores a file archive (or a part of one) into a directory: one
// goroutine walks the archive in stored order (the payload's order, so
// each chunk is loaded once, and every hard link's target comes before
// the link), creates each entry and hands regular files, as open
// descriptors in batches, to a pool of workers that write their contents
// (zero blocks stay holes) and set their metadata through the descriptor.
//
// A restore runs as root into directories that other users may be able
// to write, from archives that may be hostile (names repeated within a
// directory, symbolic links that point anywhere, hard links that record
// any path). Its rules:
//
//   - The target is the only path handed to the kernel: it is opened once
//     with O_DIRECTORY|O_NOFOLLOW (a single-entry restore opens its parent
//     directory). A target directory that is a symbolic link is refused,
//     with or without --overwrite (a single entry's target is replaced
//     with --overwrite, like any entry). The components above the target
//     are the caller's and are resolved as usual.
//   - Below it everything is made relative to the parent directory's
//     descriptor, one component at a time (names that are not one
//     component are refused even if the decoder let them through): files
//     with openat(O_CREAT|O_EXCL|O_NOFOLLOW), directories with mkdirat and
//     opened with O_DIRECTORY|O_NOFOLLOW (openat2 with RESOLVE_BENEATH |
//     RESOLVE_NO_SYMLINKS where the kernel has it), symbolic links with
//     symlinkat, devices, FIFOs and sockets with mknodat, hard links with
//     linkat between directory descriptors. No path below the target is
//     ever walked by the kernel, so paths longer than PATH_MAX restore.
//   - Metadata (owner, mode, xattrs, ACLs, capabilities, times) is set
//     only on what the restore just made: a file through the descriptor
//     it was created with, a directory through its descriptor once all of
//     its entries exist, a symbolic link, device, FIFO or socket through
//     an O_PATH handle opened without following and checked to be of the
//     type made, with one link (fchownat and utimensat with AT_EMPTY_PATH,
//     fchmodat2, setxattrat; or /proc/self/fd/N, which resolves to that
//     inode, on kernels without them). Owner and mode changes that would
//     change nothing are skipped.
//   - A name that already exists where a directory goes is entered only
//     if it is a directory this restore made there (an archive listing a
//     directory twice), checked by device and inode; otherwise it is an
//     error for that path. With --overwrite an existing directory is
//     restored into, and anything else (a symbolic link included) is
//     removed with unlinkat and replaced, never followed. The same holds
//     for files, links and special files: without --overwrite an existing
//     name fails that path (O_EXCL), with it the name is unlinked first.
//     A non-empty directory is never removed.
//   - A hard link is resolved by its place in the archive: the path it
//     records must, in the archive and through directories only, name the
//     very file the link points to; an absolute path, ".", "..", a path
//     through a symbolic link or to a file that failed to restore is
//     refused for that path. The target's directory is found among the
//     directories this restore made (re-opened from the target's
//     descriptor, component by component, each checked by device and
//     inode), and the link made with linkat, which does not follow a
//     symbolic link. A target outside the restored part of the archive
//     is restored as a copy. Metadata is never set through a hard link.
//   - New directories are made 0700 and get their own mode when the walk
//     leaves them, so nobody else can change them while the restore works
//     in them. Directories hold their descriptor open for the first 32
//     levels; deeper ones give theirs up while a subdirectory is restored
//     and open ".." of it again afterwards, checked by device and inode,
//     so a deep tree holds a bounded number of descriptors. Directories
//     nest at most 4096 levels deep.
//
// A path that cannot be restored is reported (TreeReport.Failed, and
// ErrPartial: exit 3 for the command) and the restore goes on.
//
// A Filter (TreeOptions.Filter) chooses entries by their archive path
// with backup's exclude patterns; see Filter for the rules.
//
// A restore whose context ends (the command's SIGINT or SIGTERM) returns
// the context's error with a report that says which entry the walk had
// reached (StoppedAt). A directory target gets IncompleteMarker, a file
// that says so, until a later restore into it removes it; a single file
// the restore made is removed again (only that inode).
package restore
