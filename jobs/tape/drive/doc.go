// Package drive owns cairn's virtual tape drive: a directory that holds
// tapes as files, laid out and behaving as Proxmox Backup Server's virtual
// tape drive (src/tape/drive/virtual_tape.rs):
//
//	<dir>/.drive.lck                     exclusive lock while a process uses the drive
//	<dir>/drive-status.json              {"current_tape": {"name": LABEL, "pos": N}} or null
//	<dir>/tape-<label>.json              {"files": N} (+ "max-size" when not the default)
//	<dir>/tapefile-<n>-<label>.json      tape file n: whole 256 KiB blocks (package block)
//
// The directory must exist (an empty one is a new drive); Open takes the
// lock, Inspect lists the tapes without it (for status while another
// process writes). A tape is loaded, positioned (rewind, move to file n, move to end of
// media) and read or written one file at a time. Writing at position n
// removes files n and later first. Every tape has a capacity (default
// 64 MiB); a writer gets the early warning (LEOM) once its block lands in
// the last few blocks of the tape and ENOSPC when no block fits any more.
//
// The drive knows blocks and files only; labels and archives are package
// format's, pools and catalogs package media's.
package drive
