package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	cfs "github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/internal/daemon"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/spf13/cobra"
)

type mountOpts struct {
	ns, group, snapshot string
	cacheSize           string
	readahead           int
	readaheadSet        bool // given on the command line (else clamped to what the cache takes)
	refresh             time.Duration
	allowOther          bool
	nonEmpty            bool
	imageMode           string
	statusMode          string
	stats               bool
	debug               bool
	daemon              bool
	logFile             string
	ready               func() error // the --daemon child's signal that the mount is ready
}

func (a *app) mountCmd() *cobra.Command {
	var o mountOpts
	cmd := &cobra.Command{
		Use:   "mount [--ns NS | --group TYPE/ID | --snapshot SNAPSHOT] MOUNTPOINT",
		Short: "mount the store's snapshots as a read-only filesystem (in the foreground, or --daemon)",
		Long: `Mount shows every finished snapshot of the store, read-only:

  MOUNTPOINT/[ns/NAME/…]TYPE/ID/TIME/ARCHIVE
  MOUNTPOINT/TYPE/ID/latest -> newest TIME
  MOUNTPOINT/.stats           cache and read counters (JSON)

Images are regular files, blobs their decoded content. New snapshots
appear without a remount. It stays in the foreground and unmounts on
Ctrl-C, SIGTERM or 'cairn umount MOUNTPOINT'. With --daemon it returns
once the mount is ready (exit 0) and goes on in the background, in its
own session, logging to --log-file, until SIGTERM or 'cairn umount';
when the mount fails it exits with the error instead. df MOUNTPOINT shows
the size and free space of the file system that holds the store. As non-root it needs
fusermount3 (package fuse3) and read-write access to /dev/fuse (Debian
makes it 0666; elsewhere an admin sets its mode or group), and
--allow-other needs user_allow_other in /etc/fuse.conf; cairn checks
both first and says what the admin changes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.readaheadSet = cmd.Flags().Changed("readahead")
			a.logger = a.newLogger(slog.LevelInfo) // a service's log: mounted, unmounted (without -v too)
			switch {
			case daemon.Child():
				o.ready = daemon.Ready
			case o.logFile != "" && !o.daemon:
				return usageErr("--log-file is for --daemon (in the foreground the log goes to stderr)")
			case o.daemon:
				return a.daemonize(o.logFile)
			}
			return a.mount(o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.ns, "ns", "", "mount only this namespace (and those below it)")
	f.StringVar(&o.group, "group", "", "mount only this group: [ns/NAME/…]TYPE/ID")
	f.StringVar(&o.snapshot, "snapshot", "", "mount only this snapshot: [ns/NAME/…]TYPE/ID/TIME|latest")
	f.StringVar(&o.cacheSize, "cache-size", "", "bytes of decoded chunks kept in memory (default: 1/32 of the RAM (or of the cgroup's memory.max), at least 256M, at most 1G)")
	f.IntVar(&o.readahead, "readahead", chunkcache.DefaultReadahead, "chunks loaded ahead of a sequential reader (default: 4, 16 on a remote store; 0: none; at most as many 4 MiB chunks as fill half of --cache-size)")
	f.DurationVar(&o.refresh, "refresh", cfs.DefaultRefresh, "how often snapshot lists are read again at most")
	f.BoolVar(&o.allowOther, "allow-other", false, "let other users read the mount (files of file archives as their modes and ACLs allow)")
	f.BoolVar(&o.nonEmpty, "nonempty", false, "mount over a directory that is not empty (hiding what is there)")
	f.StringVar(&o.imageMode, "image-mode", "0400", "permission bits (octal, read bits only) of images and blobs, owned by the mounting user")
	f.StringVar(&o.statusMode, "status-mode", "0400", "permission bits (octal, read bits only) of .stats and the .jobs status and log files, owned by the mounting user: they name snapshots, paths and errors (0444: every user --allow-other lets in)")
	f.BoolVar(&o.stats, "stats", false, "print the read counters (JSON) when unmounted")
	f.BoolVar(&o.debug, "debug", false, "log every FUSE request")
	f.BoolVar(&o.daemon, "daemon", false, "run in the background once the mount is ready (exit 0), or exit with the mount's error")
	f.StringVar(&o.logFile, "log-file", "", "with --daemon: append the log (and --stats) to this file (default: discarded)")
	a.keyfileFlags(cmd, false)
	return cmd
}

// mountOverhead is the Go heap a mount may use beyond its chunk cache
// (the target for the whole process is cache + 64 MiB).
const mountOverhead = 40 << 20

func (a *app) mount(o mountOpts, dir string) error {
	cs := defaultMountCache(memoryBudget())
	if o.cacheSize != "" {
		var err error
		if cs, err = parseSize(o.cacheSize); err != nil {
			return usageErr("--cache-size: %v", err)
		}
	}
	var err error
	flag := o.cacheSize
	if flag == "" {
		flag = fmt.Sprintf("%dM (the default here)", cs>>20)
	}
	if o.readahead, err = checkReadahead(o.readahead, o.readaheadSet, cs, flag); err != nil {
		return err
	}
	imageMode, err := parseReadMode("--image-mode", o.imageMode)
	if err != nil {
		return err
	}
	statusMode, err := parseReadMode("--status-mode", o.statusMode)
	if err != nil {
		return err
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	scope, err := a.mountScope(s, o)
	if err != nil {
		return err
	}
	readahead := o.readahead
	switch {
	case !o.readaheadSet:
		readahead = 0 // the fs package's default: the store's (more on a remote store)
	case readahead == 0:
		readahead = -1 // the fs package's "none"
	}
	// Evicted chunks are garbage of 4 MiB each: without a limit the heap
	// grows to twice the cache before the GC runs. Keep it near the cache.
	debug.SetMemoryLimit(max(cs, chunkcache.DefaultSize) + mountOverhead)
	mgr, err := a.jobManager(s, a.logger)
	if err != nil {
		return err
	}
	defer mgr.Close() // cancels running jobs and waits for them
	// After a signal the unmount waits up to cfs.DefaultUnmountGrace for
	// open files to be closed: the signal's grace covers that wait.
	extendSignalGrace(cfs.DefaultUnmountGrace)
	srv, err := cfs.Mount(a.ctx, dir, cfs.Options{Store: s, Scope: scope, CacheSize: cs, Readahead: readahead,
		ImageMode: imageMode, StatusMode: statusMode, NonEmpty: o.nonEmpty,
		Refresh: o.refresh, AllowOther: o.allowOther, Debug: o.debug, Log: a.logger, Trees: cfs.PxarTrees{},
		Extra: []cfs.RootEntry{cfs.JobsEntry(mgr, uint32(os.Getuid()), uint32(os.Getgid()), statusMode)}})
	if err != nil {
		return err
	}
	a.logger.Info("mounted", "dir", srv.Dir(), "store", s.Root(), "cache_bytes", cs)
	if o.ready != nil {
		if err := o.ready(); err != nil {
			srv.Unmount()
			return err
		}
		a.logger.Info("serving in the background", "dir", srv.Dir(), "store", s.Root(), "pid", os.Getpid())
	}
	select {
	case <-a.ctx.Done():
		a.logger.Info("unmounting", "dir", srv.Dir())
		err = srv.Unmount()
	case <-srv.Done():
		a.logger.Info("unmounted from outside", "dir", srv.Dir())
	}
	if o.stats {
		out, _ := json.MarshalIndent(srv.Stats(), "", "  ") // a struct of ints always marshals
		fmt.Fprintf(a.stdout, "%s\n", out)
	}
	return err
}

// checkReadahead bounds --readahead n by the cache (cfs.MaxReadahead):
// the default shrinks to fit a small --cache-size, a value given that does
// not fit is a usage error.
func checkReadahead(n int, given bool, cacheSize int64, cacheFlag string) (int, error) {
	m := cfs.MaxReadahead(cacheSize)
	switch {
	case n < 0:
		return 0, usageErr("--readahead: %d is negative", n)
	case n > m && !given:
		return m, nil
	case n > m:
		return 0, usageErr("--readahead %d: %d chunks of 4 MiB ahead of each reader need more than half of --cache-size %s; give at most %d, or a larger --cache-size", n, n, cacheFlag, m)
	}
	return n, nil
}

// parseReadMode reads --image-mode or --status-mode: octal read bits.
func parseReadMode(flag, s string) (uint32, error) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, usageErr("%s %q: want an octal mode such as 0400, 0440 or 0444", flag, s)
	}
	if err := cfs.CheckImageMode(uint32(m)); err != nil {
		return 0, usageErr("%s: %v", flag, err)
	}
	return uint32(m), nil
}

// mountScope turns --ns, --group and --snapshot into the part of the
// store to mount; --group and --snapshot are taken inside --ns.
func (a *app) mountScope(s *store.Store, o mountOpts) (cfs.Scope, error) {
	ns := store.NS(strings.Trim(o.ns, "/"))
	if err := ns.Check(); err != nil {
		return cfs.Scope{}, usageErr("--ns: %v", err)
	}
	if o.group != "" && o.snapshot != "" {
		return cfs.Scope{}, usageErr("--group and --snapshot exclude each other")
	}
	ref := o.group + o.snapshot
	if ref == "" {
		return cfs.Scope{NS: ns}, nil
	}
	r, err := store.ParseRef(ref)
	if err != nil {
		return cfs.Scope{}, usageErr("%v", err)
	}
	switch {
	case ns != "" && r.NS != "":
		r.NS = ns + "/" + r.NS
	case ns != "":
		r.NS = ns
	}
	if o.group != "" {
		if !r.Latest || strings.HasSuffix(strings.TrimSuffix(ref, "/"), "/latest") {
			return cfs.Scope{}, usageErr("--group %q: want [ns/NAME/…]TYPE/ID", o.group)
		}
		g := r.Group
		return cfs.Scope{Group: &g}, nil
	}
	snap, err := s.Resolve(r)
	if err != nil {
		return cfs.Scope{}, err
	}
	if r.Latest {
		a.logger.Info("mounting the group's newest snapshot; it stays the same while mounted", "snapshot", snap.String())
	}
	return cfs.Scope{Snapshot: &snap}, nil
}

func (a *app) umountCmd() *cobra.Command {
	var lazy bool
	cmd := &cobra.Command{
		Use:   "umount [--lazy] MOUNTPOINT",
		Short: "unmount a cairn mount; its 'cairn mount' process then exits",
		Long: `Umount unmounts a cairn mount (also one whose process died). While files
under it are open it refuses, unless --lazy: then the mount disappears at
once and goes away completely when the last open file is closed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cfs.Unmount(args[0], lazy)
		},
	}
	cmd.Flags().BoolVar(&lazy, "lazy", false, "detach now even if files are open")
	return cmd
}

// daemonize starts the mount in the background and waits until it is
// ready or has failed. logFile receives the daemon's log ("": discarded).
func (a *app) daemonize(logFile string) error {
	pass, err := a.daemonPassphrase()
	if err != nil {
		return err
	}
	if pass != nil {
		defer pass.Close()
	}
	pid, err := daemon.Start(a.ctx, a.stderr, logFile, pass, envPasswordFile)
	if ee := (*daemon.ExitError)(nil); errors.As(err, &ee) {
		return &codeError{ee.Code, ee.Err}
	}
	if err != nil {
		return err
	}
	a.logger.Info("mount running in the background", "pid", pid, "log", daemon.LogName(logFile))
	return nil
}
