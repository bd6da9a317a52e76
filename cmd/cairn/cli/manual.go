package cli

import (
	"strconv"
	"syscall"
)

// The manual's shared content, in one place: the man pages (gen_man.go)
// and the README's "Exit codes", "Environment" and "Files" sections are
// rendered from these tables (readme_test.go keeps the README in step).
// Text may hold `code spans` in backquotes, the only markup: bold in a
// man page, code in the README.

// manEntry is one row of a manual table: a term and what it means.
type manEntry struct{ term, text string }

// exitStatuses are the exit codes of every command.
var exitStatuses = []manEntry{
	{strconv.Itoa(exitOK), "success"},
	{strconv.Itoa(exitError), "failure (nothing or not everything was done; the message says what)"},
	{strconv.Itoa(exitUsage), "bad usage: an unknown command or flag, missing or extra arguments, a bad value (`--type foo`, a bad duration or size, a snapshot in another namespace than `--ns`); nothing was done"},
	{strconv.Itoa(exitPartial), "finished, but something failed (unreadable files, corrupt chunks, paths not restored, snapshots refused)"},
	{strconv.Itoa(128 + int(syscall.SIGINT)), "interrupted by SIGINT (Ctrl-C)"},
	{strconv.Itoa(128 + int(syscall.SIGTERM)), "interrupted by SIGTERM"},
}

// environment lists every variable cairn reads (readme_test.go checks
// the code reads no other CAIRN_* or AWS_* variable).
var environment = []manEntry{
	{"CAIRN_STORE", "the store directory when `--store` is not given (default `./cairn-store`)"},
	{"CAIRN_KEYFILE", "key files, colon-separated, for the commands that take `--keyfile` when none is given"},
	{"CAIRN_KEY_PASSWORD_FILE", "a file whose first line is the key files' passphrase, when `--password-file` is not given; else the terminal is asked"},
	{"CAIRN_KEY_NEW_PASSWORD_FILE", "the new passphrase of `cairn key change-passphrase`, when `--new-password-file` is not given"},
	{"CAIRN_MASTER_PASSWORD_FILE", "the master private key's passphrase (`key create-master`, `key recover`), when `--master-password-file` is not given"},
	{"AWS_ACCESS_KEY_ID", "the access key of a store on object storage made without `--credentials-file` (read by every command that opens it)"},
	{"AWS_SECRET_ACCESS_KEY", "its secret key"},
	{"AWS_SESSION_TOKEN", "its session token, when the keys are temporary"},
	{"AWS_PROFILE", "the section of a credentials file in AWS's shared format (default `[default]`)"},
	{"CAIRN_PROGRESS_INTERVAL", "the interval of progress lines (a Go duration such as `500ms`; default 10s when stderr is not a terminal)"},
	{"CAIRN_CPUPROFILE", "write a Go CPU profile of the command to this file (`go tool pprof`)"},
	{"CAIRN_TRACE", "write a Go runtime trace of the command to this file (`go tool trace`)"},
	{"SOURCE_DATE_EPOCH", "the date `cairn gen man` puts on the pages (seconds since 1970), for reproducible builds"},
}

// files are the paths a user meets: the store's layout, PBS's, and what
// the other commands read and write.
var files = []manEntry{
	{"STORE/.lock", "the store's process lock (shared by writers, exclusive for `gc`), mode 0600"},
	{"STORE/.chunks/XXXX/DIGEST", "a chunk: one DataBlob named by the SHA-256 of its data, under one of 65,536 prefix directories; `DIGEST.N.bad` is a chunk `verify` found corrupt"},
	{"STORE/[ns/NAME/…]TYPE/ID/TIME/", "a snapshot: `index.json.blob` (its manifest, written last), `NAME.img.fidx` (an image's index), `NAME.mpxar.didx` and `NAME.ppxar.didx` (a file archive's), `NAME.blob`, and `.protected` when protected"},
	{"STORE/…/TYPE/ID/.backup.lck", "the group's backup lock: one backup of a group at a time"},
	{"STORE/.job-KIND.lck", "one job of each kind (verify, gc, prune, sync, tape-export, tape-restore) at a time, from a command or the mount"},
	{"STORE/.gc-status", "the last garbage collection's report, in PBS's form (`cairn gc --status`)"},
	{"STORE/remote.json", "a store on object storage: bucket, prefix, endpoint, region and the credentials file's path, never a secret (mode 0600); STORE also holds a mirror of the snapshot files"},
	{"STORE/.chunk-cache/", "the on-disk chunk cache of a store on object storage (`--cache-size`)"},
	{"CREDENTIALS", "the file `init --credentials-file` names: `KEY=VALUE` lines or AWS's shared format; a regular file of the user's, mode 0600"},
	{"KEYFILE", "an encryption key file in PBS's format (`key create`, `--keyfile`), mode 0600"},
	{"DIR/.pxarexclude", "exclude patterns of a directory being backed up, as PBS's"},
	{"TARGET/.cairn-restore-incomplete", "left in a directory by an interrupted tree restore; the next complete restore removes it"},
	{"MOUNTPOINT/.jobs/KIND/control", "write a command (`start …`, `cancel`) to start or stop a job; `status` (JSON) and `log` beside it"},
	{"MOUNTPOINT/.stats", "the mount's cache and read counters (JSON)"},
	{"DRIVE/", "a virtual tape drive: `tape-LABEL.json` and `tapefile-N-LABEL.json` (the tapes), `inventory.json` (labelled tapes), `catalog/UUID.log` (one media catalog per tape)"},
	{"/etc/fuse.conf", "needs `user_allow_other` for `mount --allow-other` by a user other than root"},
}

// rootLong is cairn's own description: cairn(1) and cairn --help.
const rootLong = `cairn is a deduplicating backup store whose snapshots you can mount. It
keeps backups of disk images and directory trees in a content-addressed
chunk store laid out as Proxmox Backup Server lays out a datastore
(.chunks/, .fidx and .didx indexes, index.json.blob manifests, DataBlob
chunks with zstd, pxar v2 file archives), mounts the whole store as one
read-only FUSE file system, verifies every chunk, writes snapshots to a
virtual tape drive, copies them between stores, and restores images and
trees in parallel. A store is a local directory or a bucket on
S3-compatible object storage.

The store is --store DIR, else $CAIRN_STORE, else ./cairn-store. Snapshots
are named as in PBS: [ns/NAME/…]TYPE/ID/TIME (vm/100/2024-05-01T10:00:00Z);
TYPE/ID or TYPE/ID/latest means the group's newest finished snapshot.
Every command that takes a snapshot or group also takes --ns a/b, and a
reference in another namespace than --ns is bad usage. Archives are named
as the user gave them: disk.img, root.pxar, notes.blob.

Commands that take a lock or start a job fail at once when another
process holds it, naming the holder, or wait for it with --lock-wait
DURATION. A signal stops a command cleanly and it says what was kept; a
second signal, or the end of a grace period of 5 seconds, ends it at
once. Sizes (--chunk-size 4M, --cache-size 1G) are binary: k, M, G, T,
KiB and KB all mean powers of 1024; every --json output uses snake_case
keys (docs/json.md). Results go to stdout; progress, warnings and errors
to stderr, every log line in one format (--log-format), the S3 client's
retries too. -q prints errors only: no summary, progress or warning; -v
adds INFO lines (job phases, S3 retries: one that succeeds is no news),
-vv debug ones; a mount logs that it mounted and unmounted without -v.`
