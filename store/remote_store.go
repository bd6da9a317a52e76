package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/cairnfs/cairn/store/internal/fsutil"
	"github.com/cairnfs/cairn/store/objstore"
)

// A remote store keeps its chunks and its snapshot files in an
// S3-compatible bucket (package objstore) and uses its local directory,
// the store's root, as a cache and a workspace: the directory holds
// RemoteConfigName, the snapshot directories as the bucket has them
// (refreshed when the store is opened), and a bounded cache of chunks.
// Everything outside the remote_*.go files sees a remote store as it
// sees a local one, through the two seams set here once: s.backend
// (Backend: remoteChunks) and s.meta (MetaStore: remoteMeta). s.remote
// is nil for a local store, and only remote_*.go look at it.

// Bucket key layout (relative to the configured prefix):
//
//	.chunks/XXXX/<digest>             chunks, as in a local store
//	<ns>/<type>/<id>/<time>/<file>    snapshot files, as in a local store
//	.cairn/leases/writers/<random>    running writers (backups, tape restores)
//	.cairn/leases/groups/<group>      a group's backup lock
//	.cairn/leases/gc                  the one running GC
const (
	leasesPrefix       = ".cairn/leases/"
	writerLeasesPrefix = leasesPrefix + "writers/"
	groupLeasesPrefix  = leasesPrefix + "groups/"
	gcLeaseKey         = leasesPrefix + "gc"
)

// RemoteConfig names a remote store's bucket and how it is used.
type RemoteConfig struct {
	objstore.Config
	// CacheSize bounds the on-disk chunk cache, in bytes (0: the default).
	CacheSize int64 `json:"cache_size,omitempty"`
}

// remote is what a remote store has beyond a local one.
type remote struct {
	cfg    RemoteConfig
	bucket objstore.Objects

	ctx       context.Context // the store's requests that have no context of their own; Close cancels it
	cancel    context.CancelFunc
	cache     *diskCache // remote_cache.go
	sweepLook sweepCache // remote_gc_record.go
	attached  bool       // CreateRemote found the store in the bucket
	leases    leaseSet   // remote_leases.go
	meta      metaSync   // remote_meta_refresh.go
}

// chunkKey is chunk d's key in the bucket.
func chunkKey(d fmt.Stringer) string {
	s := d.String()
	return path.Join(chunkDir, s[:4], s)
}

// IsRemote tells whether the store's chunks and snapshots live in a bucket.
func (s *Store) IsRemote() bool { return s.remote != nil }

// Open, finding RemoteConfigName in a store's directory, opens it the
// way registered here.
func init() { RegisterRemote(opener(nil)) }

// OpenOn opens the remote store in dir on the bucket o instead of the one
// its remote.json names (tests: an in-memory bucket, package memstore).
func OpenOn(dir string, o objstore.Objects) (*Store, error) { return OpenRemote(dir, opener(o)) }

// readRemoteConfig reads dir's RemoteConfigName.
func readRemoteConfig(dir string) (cfg RemoteConfig, err error) {
	name := filepath.Join(dir, RemoteConfigName)
	b, err := ReadFileBounded(name, 64<<10)
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
func opener(o objstore.Objects) RemoteOpener {
	return func(ctx context.Context, s *Store) (Remote, error) {
		root := s.Root()
		cfg, err := readRemoteConfig(root)
		if err != nil {
			return Remote{}, fmt.Errorf("open store %s: %w", root, err)
		}
		b, offline := o, error(nil)
		if b == nil {
			if b, offline, err = openBucket(ctx, cfg.Config); err != nil {
				return Remote{}, fmt.Errorf("open store %s: %w", root, err)
			}
		}
		s.remote = newRemote(root, cfg, b)
		opened := func(ctx context.Context) error {
			if offline != nil {
				s.warnOffline(offline)
				return nil
			}
			return s.refreshOnOpen(ctx)
		}
		return Remote{Backend: &remoteChunks{mirror: LocalBackend(root), r: s.remote},
			Meta: remoteMeta{s}, Opened: opened}, nil
	}
}

// writeRemoteConfig writes cfg into dir (0600, temp + rename).
func writeRemoteConfig(dir string, cfg RemoteConfig) error {
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, RemoteConfigName), append(b, '\n')); err != nil {
		return err
	}
	return os.Chmod(filepath.Join(dir, RemoteConfigName), 0o600)
}

// openBucket opens the bucket cfg names with the credentials it names;
// one that is unreachable is returned unchecked, with offline the error.
func openBucket(ctx context.Context, cfg objstore.Config) (b objstore.Objects, offline, err error) {
	cred, err := objstore.LoadCredentials(cfg.CredentialsFile)
	if err != nil {
		return nil, nil, err
	}
	ob, err := objstore.Open(ctx, cfg, cred, objstore.Options{})
	if errors.Is(err, objstore.ErrUnreachable) {
		ub, cerr := objstore.Client(cfg, cred, objstore.Options{})
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
