// Package dirent lists directories with getdents(2) and keeps what
// os.ReadDir and unix.ParseDirent drop: each entry's d_ino and d_type.
//
// A linux_dirent64 record, as the kernel writes it into the buffer:
//
//	 0        8        16       18     19
//	+--------+--------+--------+------+---------------------+
//	| d_ino  | d_off  | reclen | type | name, NUL, padding  |
//	| u64    | s64    | u16    | u8   | up to reclen        |
//	+--------+--------+--------+------+---------------------+
//
// The store reads a group's snapshot directories with it (their d_ino
// tells a listing is unchanged without a stat each); the backup walk
// lists every directory with it (the read-ahead helper uses d_type, the
// walk checks a file the helper opened against d_ino). A record that is
// short or runs past the buffer is ErrMalformed, never a panic.
package dirent
