package s3store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/internal/fsutil"
	"github.com/cairnfs/cairn/store/objstore"
)

// A remote store keeps its chunks and its snapshot files in an
// S3-compatible bucket (package objstore) and uses its local directory,
// the store's root, as a cache and a workspace: the directory holds
// store.RemoteConfigName, the snapshot directories as the bucket has
// them (refreshed when the store is opened), and a bounded cache of
// chunks. Everything outside this package sees a remote store as it
// sees a local one, through the two seams the opener gives the Store:
// its Backend (remoteChunks) and its MetaStore (remoteMeta).

// Bucket key layout (relative to the configured prefix):
//
//	.chunks/XXXX/<digest>             chunks, as in a local store
//	<ns>/<type>/<id>/<time>/<file>    snapshot files, as in a local store
//	.cairn/leases/writers/<random>    running writers (backups, tape restores)
//	.cairn/leases/groups/<group>      a group's backup lock
//	.cairn/leases/gc                  the one running GC
//	.cairn/probe/<random>             a probe of conditional writes (cond.go), deleted after it
const (
	chunkDir           = ".chunks"
	leasesPrefix       = ".cairn/leases/"
	writerLeasesPrefix = leasesPrefix + "writers/"
	groupLeasesPrefix  = leasesPrefix + "groups/"
	gcLeaseKey         = leasesPrefix + "gc"
)

// Config names a remote store's bucket and how it is used.
type Config struct {
	objstore.Config
	// CacheSize bounds the on-disk chunk cache, in bytes (0: the default).
	CacheSize int64 `json:"cache_size,omitempty"`
}

// rstore is a remote store as this package sees it: the Store, what it
// has beyond a local one, and its root.
type rstore struct {
	*store.Store
	remote *remote
	root   string
}

// of is the remote store s, or nil when s is another kind of store.
func of(s *store.Store) *rstore {
	if m, ok := s.Meta().(remoteMeta); ok {
		return m.s
	}
	return nil
}

// remote is what a remote store has beyond a local one.
type remote struct {
	cfg    Config
	bucket objstore.Objects

	ctx       context.Context // the store's requests that have no context of their own; Close cancels it
	cancel    context.CancelFunc
	cache     *diskCache // cache.go
	sweepLook sweepCache // gc_record.go
	cond      condState  // cond.go
	attached  bool       // Create found the store in the bucket
	leases    leaseSet   // leases.go
	meta      metaSync   // meta_refresh.go
}

// chunkKey is chunk d's key in the bucket.
func chunkKey(d fmt.Stringer) string {
	s := d.String()
	return path.Join(chunkDir, s[:4], s)
}

// store.Open, finding store.RemoteConfigName in a store's directory,
// opens it the way registered here.
func init() { store.RegisterRemote(opener(nil)) }

// OpenOn opens the remote store in dir on the bucket o instead of the one
// its remote.json names (tests: an in-memory bucket, package memstore).
func OpenOn(dir string, o objstore.Objects) (*store.Store, error) {
	return store.OpenRemote(dir, opener(o), store.OpenOptions{Logger: o.Logger()})
}

// readRemoteConfig reads dir's RemoteConfigName.
func readRemoteConfig(dir string) (cfg Config, err error) {
	name := filepath.Join(dir, store.RemoteConfigName)
	b, err := store.ReadFileBounded(name, 64<<10)
	if err != nil {
		return cfg, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%s: %w", name, err)
	}
	if cfg.Bucket == "" || cfg.Endpoint == "" {
		return cfg, fmt.Errorf("%s: no bucket or endpoint", name)
	}
	return cfg, nil
}

// opener connects a remote store to the bucket its configuration names
// (o, when not nil: OpenOn), then refreshes its mirror. A bucket that
// cannot be reached leaves the store offline: it reads its local mirror
// (with a warning), and every request fails at once.
func opener(o objstore.Objects) store.RemoteOpener {
	return func(ctx context.Context, st *store.Store) (store.Remote, error) {
		root := st.Root()
		cfg, err := readRemoteConfig(root)
		if err != nil {
			return store.Remote{}, fmt.Errorf("open store %s: %w", root, err)
		}
		b, offline := o, error(nil)
		if b == nil {
			if b, offline, err = openBucket(ctx, cfg.Config, st.Logger()); err != nil {
				return store.Remote{}, fmt.Errorf("open store %s: %w", root, err)
			}
		}
		s := &rstore{Store: st, remote: newRemote(root, cfg, b), root: root}
		opened := func(ctx context.Context) error {
			if offline != nil {
				s.warnOffline(offline)
				return nil
			}
			return s.refreshOnOpen(ctx)
		}
		return store.Remote{Backend: &remoteChunks{mirror: store.LocalBackend(root), r: s.remote},
			Meta: remoteMeta{s}, Opened: opened}, nil
	}
}

// writeRemoteConfig writes cfg into dir (0600, temp + rename).
func writeRemoteConfig(dir string, cfg Config) error {
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, store.RemoteConfigName), append(b, '\n')); err != nil {
		return err
	}
	return os.Chmod(filepath.Join(dir, store.RemoteConfigName), 0o600)
}

// openBucket opens the bucket cfg names with the credentials it names;
// one that is unreachable is returned unchecked, with offline the error.
func openBucket(ctx context.Context, cfg objstore.Config, log *slog.Logger) (b objstore.Objects, offline, err error) {
	cred, err := objstore.LoadCredentials(cfg.CredentialsFile)
	if err != nil {
		return nil, nil, err
	}
	ob, err := objstore.Open(ctx, cfg, cred, objstore.Options{Logger: log})
	if errors.Is(err, objstore.ErrUnreachable) {
		ub, cerr := objstore.Client(cfg, cred, objstore.Options{Logger: log})
		if cerr != nil {
			return nil, nil, cerr
		}
		return ub, err, nil
	}
	if err != nil {
		return nil, nil, err // it names the bucket and the endpoint
	}
	return ob, nil, nil
}
