// Package tape exports datastore snapshots to tape and restores them, on
// cairn's virtual tape drive, in Proxmox Backup Server's tape format. It
// holds the two tape job kinds, ExportKind and RestoreKind (their
// parameters, ParseExportParams into ExportJobOptions and
// ParseRestoreParams into RestoreJobOptions, and their reports,
// ExportJobReport and RestoreJobReport, with next steps), the engines
// they run (Export with ExportOptions and ExportReport, Restore with
// RestoreOptions and RestoreReport), and the small API the tape
// commands use to manage a drive: ReadDriveStatus, ReadCatalogs, Label,
// Erase and RebuildCatalogs.
// Callers outside jobs/tape need none of its subpackages.
//
// Export reads, for each snapshot, the chunks that are neither on the
// media set yet nor already sent by this job, on N reader goroutines
// feeding a bounded channel of max(2N, 3) chunks to the one tape writer;
// then it writes the snapshot archive and commits the catalog, so a crash
// loses at most the snapshot in flight. Restore reads snapshot archives
// first, then only the chunk archives that hold missing chunks (found
// through the media catalog), checks every chunk before inserting it, and
// makes a snapshot visible only when all its chunks are in the store.
//
// Encrypted snapshots travel as they are stored: export copies their
// chunks byte for byte (checking only the CRC, which covers the
// ciphertext), and their manifests keep their signatures. Restore checks
// an encrypted chunk with the key of a snapshot that names it when
// RestoreOptions.SnapshotKey gives one (the tape-restore job passes the
// store's keys): decrypted, keyed digest; that snapshot's manifest
// signature is checked first and a bad one fails it. Without the key, as
// PBS, only the CRC and the header are checked (restorekeys.go).
//
// Both work through small interfaces, Source and Sink; StoreSource and
// StoreSink implement them over a local datastore. A Source may also
// size chunks (Sizer: progress gets a byte total), read into recycled
// buffers (BufferLoader) and take read-ahead hints for the chunks queued
// for the readers (Prefetcher), which keeps one reader as fast as the
// disk streams the chunk files. The layers below live
// in subpackages: block (256 KiB blocks), drive (the virtual drive),
// format (archives and labels), catalog (media catalogs) and media
// (inventory, pools, media sets). The text the tape commands print of
// the jobs' reports, the drive's status and the catalogs is
// report_text.go's (WriteText, WriteCatalogs).
package tape
