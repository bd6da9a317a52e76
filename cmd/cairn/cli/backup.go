package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/backup"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/backupsrc"
	"github.com/cairnfs/cairn/store/backupsum"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/spf13/cobra"
)

type backupOpts struct {
	typ, id, ns string
	json        bool
	chunkSize   string
	workers     int
	at          string
	noSync      bool
	dryRun      bool
	masterPub   string // --master-pubkey
	pxar        pxarOpts
}

func (a *app) backupCmd() *cobra.Command {
	var o backupOpts
	cmd := &cobra.Command{
		Use:   "backup --type vm|ct|host --id ID [--ns NS] NAME.img:PATH|- … NAME.pxar:DIR … NAME.blob:PATH|- …",
		Short: "back up images, raw files, block devices and directory trees into a new snapshot",
		Long: `Back up images (NAME.img:PATH: a file or block device, fixed-size chunks) and
directory trees (NAME.pxar:DIR: a pxar archive) into one new snapshot.

Images are cut into fixed chunks: an incremental backup stores every chunk
that holds a changed block, so smaller chunks store less of what did not
change, but each costs a file, or requests on object storage. Without
--chunk-size an image keeps the chunk size of the group's newest
snapshot of it (chunks of another size are all new), and a new one takes
256 KiB in a local store, 4 MiB on object storage.

NAME.img:- reads the image from standard input (its size need not be known:
the index records it at the end; an empty input is an error). NAME.blob:PATH
stores a small file (a configuration, a log) as a blob, as PBS stores
qemu-server.conf.blob: at most 128 MiB less 12 bytes, refused before reading
when larger; NAME.blob:- reads it from standard input. One archive at most
reads standard input.

Directory trees are walked in one pass; symlinks are never followed, other
file systems are left empty unless --all-file-systems, entries matching
--exclude patterns or .pxarexclude files are left out. Files that vanish or
cannot be read are reported on stderr; the backup goes on and exits 3.
--files-from FILE (restic's; also --files-from-verbatim, --files-from-raw)
backs up only the paths FILE lists in the one NAME.pxar:DIR, relative to DIR
or absolute inside it, with the directories above them; a listed path not
found is a warning naming FILE and line (exit 3), a path outside DIR an
error (exit 2).

--dry-run reads, chunks, compresses and looks up everything a backup would,
and prints its summary (what would be read, the new chunks and their size),
writing nothing to the store: no snapshot, chunk, lock, writer or lease.

--change-detection-mode (as in PBS): legacy writes a single-stream archive;
data reads every file into a split archive (NAME.mpxar.didx +
NAME.ppxar.didx); metadata (the default when the archive has a reference) does not read files
whose size, mtime, ctime, inode, mode and owner are unchanged but references
their data in the reference. An archive's reference is the group's newest
finished snapshot that has it (encrypted with the same key, or both plain;
last verification not failed): snapshots of other archives in between do
not count. The summary names each archive's reference.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.backup(o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.typ, "type", "host", "backup type: vm, ct or host")
	f.StringVar(&o.id, "id", "", "backup id (group name), e.g. the VM number; for --type host the default is this host's name (up to its first dot), as proxmox-backup-client's")
	f.StringVar(&o.ns, "ns", "", "namespace, e.g. prod/db")
	f.BoolVar(&o.json, "json", false, "print the summary as JSON")
	f.StringVar(&o.chunkSize, "chunk-size", "", "fixed chunk size of images (default: the previous snapshot's, else 256K, 4M on object storage), average chunk size of file archives (default 4M); a power of two, 64K to 16M")
	f.IntVar(&o.workers, "workers", 0, "hash/compress workers (default: number of CPUs)")
	f.StringVar(&o.at, "time", "", "snapshot time (RFC 3339; default now): newer than the group's newest snapshot, not before 2019-01-18T07:41:48Z (PBS's oldest), at most a day ahead")
	f.BoolVar(&o.noSync, "no-sync", false, "do not syncfs the store before writing the manifest")
	f.BoolVarP(&o.dryRun, "dry-run", "n", false, "read, chunk and look up everything, write nothing: say what a backup would read and store")
	o.pxar.flags(f)
	a.keyfileFlags(cmd, true)
	f.StringVar(&o.masterPub, "master-pubkey", "", "with --keyfile: store the key file wrapped for this RSA master public key (PEM), for recovery with 'cairn key recover'")
	a.lockWaitFlag(cmd)
	return cmd
}

func (a *app) backup(o backupOpts, args []string) error {
	specs, err := backupsrc.ParseSpecs(args)
	if err != nil {
		return usageErr("%s", strings.TrimPrefix(err.Error(), backupsrc.ErrBadSpec.Error()+": "))
	}
	bo := backup.Options{Specs: specs, NoSync: o.noSync, DryRun: o.dryRun, Warn: a.stderr,
		Tree: filearchive.Options{AllFileSystems: o.pxar.allFS, ChunkSize: chunk.DefaultChunkSize, Workers: o.workers, Logger: a.logger}}
	if o.chunkSize != "" {
		cs, err := parseSize(o.chunkSize)
		if err != nil {
			return usageErr("--chunk-size: %v", err)
		}
		if err := chunk.CheckChunkSize(int(cs)); err != nil {
			return usageErr("--chunk-size: %v", err)
		}
		bo.ImageChunkSize, bo.Tree.ChunkSize = int(cs), int(cs)
	}
	if bo.Tree.Mode, err = filearchive.ParseMode(o.pxar.mode); err != nil {
		return usageErr("--change-detection-mode: %v", err)
	}
	if bo.Tree.Exclude, err = o.pxar.patterns(); err != nil {
		return usageErr("%v", err)
	}
	if o.at != "" {
		if bo.Time, err = time.Parse(time.RFC3339, o.at); err != nil {
			return usageErr("--time: %v", err)
		}
		if err := store.CheckBackupTime(bo.Time); err != nil { // a zero time would be taken as now
			return usageErr("--time: %v", err)
		}
	}
	id, err := backupID(o)
	if err != nil {
		return err
	}
	bo.Group = store.Group{NS: store.NS(o.ns), Type: o.typ, ID: id}
	if err := bo.Group.Check(); err != nil {
		return usageErr("--type/--id/--ns: %v", err)
	}
	if o.masterPub != "" && slices.ContainsFunc(specs, func(sp backupsrc.Spec) bool { return sp.Name == store.MasterKeyBlob }) {
		return usageErr("archive %s: --master-pubkey writes the wrapped key under that name", store.MasterKeyBlob)
	}
	enc, err := a.backupEncryption(o)
	if err != nil {
		return err
	}
	bo.Encrypt = enc.start
	in, err := backupsrc.Open(a.ctx, specs, a.stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	if bo.Select, err = a.backupSelection(&o.pxar, specs); err != nil {
		return err
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	bo.Progress = func(label string, p *backupsrc.Progress) func() { return a.showProgress(label, p.Sample).Stop }
	sum, err := backup.Run(a.ctx, s, in, bo)
	if errors.Is(err, store.ErrBadTime) && o.at != "" {
		return usageErr("--time: %v", err)
	}
	if err != nil {
		return err
	}
	if enc.key != nil {
		sum.KeyFingerprint = enc.key.Fingerprint().String()
	}
	if err := a.printBackupSummary(o, sum); err != nil {
		return err
	}
	if sum.Errors > 0 {
		return &codeError{code: exitPartial, err: fmt.Errorf("%s %s finished, but %d entries could not be read or were not found (see above)",
			backup.Verb(sum), sum.Snapshot, sum.Errors)}
	}
	return nil
}

func (a *app) printBackupSummary(o backupOpts, sum backupsum.Summary) error {
	if o.json {
		return printJSON(a, sum)
	}
	if a.quiet {
		return nil
	}
	sum.WriteText(a.stdout)
	return nil
}

// backupID is --id, or for --type host without it the host's name up to
// its first dot (proxmox-backup-client's default), which must be a valid
// backup id.
func backupID(o backupOpts) (string, error) {
	if o.id != "" {
		return o.id, nil
	}
	if o.typ != store.TypeHost {
		return "", usageErr("--id is required with --type %s", quoteName(o.typ))
	}
	name, err := os.Hostname()
	if err != nil {
		return "", usageErr("--id not given and the host name is unknown (%v): give --id", err)
	}
	name, _, _ = strings.Cut(name, ".")
	if err := (store.Group{Type: store.TypeHost, ID: name}).Check(); err != nil {
		return "", usageErr("--id not given and the host name %q is not a valid backup id ([A-Za-z0-9_][A-Za-z0-9._-]*): give --id", name)
	}
	return name, nil
}
