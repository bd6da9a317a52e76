// Package block owns the lowest layer of cairn's tape format, the one
// Proxmox Backup Server writes (pbs-tape): every tape file is a sequence of
// fixed 256 KiB blocks, each starting with a 16-byte header
//
//	magic[8] | flags u8 | payload size u24 LE | sequence number u32 LE
//
// followed by the payload. The last block of a file carries the
// END_OF_STREAM flag (and INCOMPLETE when the writer gave up at the end of
// the media); after it the drive writes a file mark.
//
// Writer turns a byte stream into blocks for a Device and reports the
// drive's early end-of-media warning (LEOM); Reader turns the blocks of one
// tape file back into the byte stream and checks magic, sequence numbers,
// sizes and the end marker. Drives (package drive) implement Device and
// Source.
package block
