package cli

import (
	"fmt"
	"os/user"
	"strconv"
	"sync/atomic"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

func (a *app) initCmd() *cobra.Command {
	var group string
	var asJSON bool
	var o s3Opts
	cmd := &cobra.Command{
		Use:   "init [--group NAME] [--s3 s3://BUCKET/PREFIX --endpoint URL ...]",
		Short: "create a datastore (65,536 chunk directories and a lock file), readable by its owner only",
		Long: `Init creates a datastore: the directory (mode 0700), .chunks with its
65,536 prefix directories (0700) and the lock file .lock (0600), so that
no other user can read the backups or take the store's locks. With
--group NAME (as PBS's backup group) the directories are 0750 and
set-group-ID, owned by that group; lock files stay 0600 (a group member
who could open one could lock it and stall backups).

With --s3 the store lives in an S3-compatible bucket (AWS S3, MinIO,
Ceph RGW) under PREFIX, and DIR holds its configuration (remote.json,
0600, no secret), a mirror of its snapshot files and a bounded chunk
cache (--cache-size). The keys come from AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN) or --credentials-file (a file
only its owner can read, never a symlink: KEY=VALUE lines with those
names, or AWS's shared credentials format, [default] or the section
AWS_PROFILE names, with aws_access_key_id = ... lines), never from the
command line. The bucket and
the keys are checked first; nothing is written when they fail. A prefix
that holds a cairn store already is attached to: another host's DIR for
the same store.

An endpoint that cannot be reached (a name that does not resolve, a
connection refused) fails a command at once; a store whose bucket is
unreachable lists its snapshots from the local mirror, with a warning
saying when it was last refreshed.

Every request to the bucket is bounded: 15 s, plus 1 s for each MiB it
sends or may receive (a 4 MiB chunk: 19 s); a stalled request is cut
and retried, up to 8 times, with exponential backoff (0.2 s doubling to
15 s, with jitter), each retry logged. Answers are checked, not trusted:
uploads carry their Content-MD5 and the ETag answered must be that MD5
(set "etag_not_md5": true in remote.json for a bucket encrypting with
SSE-KMS or SSE-C, whose ETags are not), a touch must show a new time,
and running writers are found by reading objects, never by a listing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt := store.CreateOptions{Logger: a.logger}
			if group != "" {
				gid, err := lookupGroup(group)
				if err != nil {
					return err
				}
				opt.Group = &gid
			}
			if o.given(cmd) {
				return a.initRemote(o, opt, asJSON)
			}
			return a.initLocal(opt, asJSON)
		},
	}
	cmd.Flags().StringVar(&group, "group", "", "let this group read the store: 0750 set-group-ID directories owned by it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was created as JSON")
	o.flags(cmd)
	return cmd
}

// initResult is what init --json prints.
type initResult struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"` // "local" or "s3"
	Dirs     int64  `json:"dirs"` // chunk prefix directories made
	URL      string `json:"url,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Attached bool   `json:"attached,omitempty"`
}

// initLocal creates a store in a directory, showing the prefix
// directories as they are made.
func (a *app) initLocal(opt store.CreateOptions, asJSON bool) error {
	var made atomic.Int64
	opt.Progress = &made
	prog := a.showProgress("init "+a.storeDir, func() progress.Sample {
		return progress.Sample{Items: made.Load(), ItemsTotal: store.PrefixDirs, ItemsName: "directories"}
	})
	s, err := store.CreateWith(a.storeDir, opt)
	prog.Stop()
	if err != nil {
		return err
	}
	defer s.Close()
	if asJSON {
		return printJSON(a, initResult{Path: s.Root(), Kind: "local", Dirs: made.Load()})
	}
	if !a.quiet {
		fmt.Fprintf(a.stdout, "created store %s (%d chunk directories)\n", s.Root(), made.Load())
	}
	return nil
}

// lookupGroup resolves --group: a group name, or a numeric gid.
func lookupGroup(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		if _, nerr := user.LookupGroupId(name); nerr != nil {
			return 0, usageErr("--group %q: no such group (%v)", name, err)
		}
		g = &user.Group{Gid: name}
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil || gid < 0 {
		return 0, usageErr("--group %q: gid %q is not a number", name, g.Gid)
	}
	return gid, nil
}
