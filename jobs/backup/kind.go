package backup

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/backupsrc"
	"github.com/cairnfs/cairn/store/backupsum"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/dustin/go-humanize"
)

// KindName is the backup job's name, also its .jobs/backup directory.
const KindName = "backup"

// Kind is the backup job: one snapshot of local paths. The job manager
// holds the store's backup job lock while it runs (one backup job at a
// time); the backup itself holds its group's lock, as `cairn backup`.
type Kind struct{}

var (
	_ jobs.Kind     = Kind{}
	_ jobs.Work     = (*work)(nil)
	_ jobs.Reporter = (*work)(nil)
)

// Name implements jobs.Kind.
func (Kind) Name() string { return KindName }

// New implements jobs.Kind.
func (Kind) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	opt, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	return &work{s: s, opt: opt}, nil
}

// ParseParams reads the backup job's key=value parameters:
//
//	group=TYPE/ID (required)  ns=NS
//	sources=NAME.pxar:DIR,NAME.img:PATH,NAME.blob:PATH (required; comma
//	  separated, so a path holding a comma cannot be named; no "-")
//	change-detection-mode=legacy|data|metadata  workers=1..256
//	all-file-systems=true|false
//	keyfile=/ABS/KEY (encrypt, PBS's key file format)
//	password-file=/ABS/FILE (the key file's passphrase, its first line)
func ParseParams(m map[string]string) (Options, error) {
	p := jobs.NewParams(KindName, m)
	ns := store.NS(strings.Trim(p.String("ns", ""), "/"))
	group := p.String("group", "")
	sources := p.String("sources", "")
	mode := p.Enum("change-detection-mode", "", "legacy", "data", "metadata")
	opt := Options{Tree: filearchive.Options{Workers: p.Int("workers", 0, 1, 256),
		AllFileSystems: p.Bool("all-file-systems", false)}}
	opt.Key = KeySource{File: p.String("keyfile", ""), PasswordFile: p.String("password-file", "")}
	if err := p.Done(); err != nil {
		return opt, err
	}
	if err := opt.Key.check(); err != nil {
		return opt, fmt.Errorf("%w: backup %w", jobs.ErrBadParam, err)
	}
	typ, id, ok := strings.Cut(group, "/")
	if !ok {
		return opt, fmt.Errorf("%w: backup group=%q: want TYPE/ID, such as host/web1", jobs.ErrBadParam, group)
	}
	opt.Group = store.Group{NS: ns, Type: typ, ID: id}
	if err := opt.Group.Check(); err != nil {
		return opt, fmt.Errorf("%w: backup ns=%q group=%q: %w", jobs.ErrBadParam, ns, group, err)
	}
	specs, err := parseSources(sources)
	if err != nil {
		return opt, fmt.Errorf("%w: backup sources=%q: %w", jobs.ErrBadParam, sources, err)
	}
	opt.Specs = specs
	opt.Tree.Mode, _ = filearchive.ParseMode(mode) // checked by Enum
	return opt, nil
}

// parseSources reads sources=SPEC,SPEC…: at least one, none from
// standard input.
func parseSources(v string) ([]backupsrc.Spec, error) {
	if v == "" {
		return nil, fmt.Errorf("want %s, comma separated", backupsrc.SpecForms)
	}
	specs, err := backupsrc.ParseSpecs(strings.Split(v, ","))
	if err != nil {
		return nil, err
	}
	for _, sp := range specs {
		if sp.IsStdin() {
			return nil, fmt.Errorf("archive %s: a job has no standard input", sp.Name)
		}
	}
	return specs, nil
}

// Params returns the options as the parameters ParseParams reads back
// (the sources, group, namespace and the file archives' settings).
func (o Options) Params() map[string]string {
	var srcs []string
	for _, sp := range o.Specs {
		srcs = append(srcs, sp.Name+":"+sp.Path)
	}
	m := map[string]string{"group": o.Group.Type + "/" + o.Group.ID, "sources": strings.Join(srcs, ",")}
	if o.Group.NS != "" {
		m["ns"] = string(o.Group.NS)
	}
	if o.Tree.AllFileSystems {
		m["all-file-systems"] = "true"
	}
	if o.Tree.Workers > 0 {
		m["workers"] = fmt.Sprint(o.Tree.Workers)
	}
	if o.Key.File != "" {
		m["keyfile"] = o.Key.File
	}
	if o.Key.PasswordFile != "" {
		m["password-file"] = o.Key.PasswordFile
	}
	return m
}

// Report is what a backup job reports once it has ended well: the
// backup's summary, as `cairn backup --json` prints it.
type Report = backupsum.Summary

// work is one backup job's work.
type work struct {
	s   *store.Store
	opt Options

	mu   sync.Mutex
	rep  Report
	done bool
}

// Run implements jobs.Work: the sources are opened, backed up as one
// snapshot, and every entry that could not be read is an error of the
// job (the snapshot is kept without it, and the job ends failed).
func (w *work) Run(ctx context.Context, j *jobs.Job) error {
	opt := w.opt
	opt.Tree.Logger = j.Logger()
	opt.OnError = func(archive, path string, err error) { j.Errorf("%s: %s: %v", archive, path, err) }
	key, err := opt.Key.load()
	if err != nil {
		return err
	}
	if key != nil {
		defer key.Wipe()
		opt.Encrypt = func(b *store.Backup) error { return b.Encrypt(key) }
	}
	in, err := backupsrc.Open(ctx, opt.Specs, strings.NewReader(""))
	if err != nil {
		return err
	}
	defer in.Close()
	j.SetPhase("backing up")
	j.SetTotals(int64(len(opt.Specs)), in.Total())
	sum, err := Run(ctx, w.s, in, opt)
	if err != nil {
		return err
	}
	j.AddDone(sum.Chunks, sum.Bytes)
	j.Logf("%s %s: %s in %d chunks, %s new", Verb(sum), sum.Snapshot,
		humanize.IBytes(uint64(max(sum.Bytes, 0))), sum.Chunks, humanize.IBytes(uint64(max(sum.NewStored, 0))))
	w.mu.Lock()
	w.rep, w.done = sum, true
	w.mu.Unlock()
	return nil
}

// Report implements jobs.Reporter: the summary once the backup has
// ended well (nil before).
func (w *work) Report() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		return nil
	}
	return w.rep
}
