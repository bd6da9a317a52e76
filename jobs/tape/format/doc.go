// Package format owns the content of tape files as Proxmox Backup Server
// writes them (src/tape/file_formats): every file starts with a 48-byte
// MediaContentHeader and a JSON header, followed by the content:
//
//   - media label (file 0) and media set label (file 1);
//   - chunk archives: entries of a 48-byte header (magic, digest, size)
//     and the chunk's raw DataBlob, at most 4 GiB per archive;
//   - snapshot archives: the snapshot's files (manifest, indexes, blobs)
//     as a pxar v1 archive of one directory, as PBS packs them, encoded
//     and checked with store/pxar (this package holds no pxar codec of
//     its own);
//   - catalog archives: a media catalog (package catalog) copied to tape.
//
// Writers write to a TapeWriter (a block.Writer of a tape file) and stop
// cleanly at the logical end of media; readers read a TapeReader (a
// block.Reader) and check magics, sizes, CRCs and table consistency.
package format
