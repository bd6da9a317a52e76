package s3store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
)

// storeMarkerKey is the object that makes a bucket prefix a cairn store:
// Create writes it (create-only) into an empty prefix, and attaches
// to a prefix that has it.
const storeMarkerKey = ".cairn/store.json"

// storeMarkerFormat is the marker's format field.
const storeMarkerFormat = "cairn-store"

// storeMarker is the content of storeMarkerKey.
type storeMarker struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Created time.Time `json:"created"`
}

// Info describes a remote store's bucket (never a secret).
type Info struct {
	Endpoint  string `json:"endpoint"`
	Bucket    string `json:"bucket"`
	Prefix    string `json:"prefix"`
	CacheSize int64  `json:"cache_size"` // bound of the on-disk chunk cache, bytes
	// Attached tells that Create found the store in the bucket
	// (made by another host) and attached this directory to it.
	Attached bool `json:"attached"`
}

// InfoOf describes store s's bucket; ok is false for a store of another
// kind (a local one).
func InfoOf(st *store.Store) (info Info, ok bool) {
	s := of(st)
	if s == nil {
		return info, false
	}
	c := s.remote.cfg
	return Info{Endpoint: c.Endpoint, Bucket: c.Bucket, Prefix: c.Prefix,
		CacheSize: s.remote.cache.limit, Attached: s.remote.attached}, true
}

// Create makes dir (which may exist but must be empty of a store)
// the local directory of a store in the bucket cfg names, and opens it.
// The bucket and the credentials are checked first: when they fail,
// nothing is written, locally or in the bucket. A prefix that holds a
// cairn store already is attached to (a second host sharing the store:
// InfoOf tells); one that holds anything else is refused.
// remote.json (0600) is written last: until then dir is no store.
func Create(ctx context.Context, dir string, cfg Config, opt store.CreateOptions) (*store.Store, error) {
	return create(ctx, dir, cfg, opt, nil)
}

// CreateOn is Create on the bucket o (tests: an in-memory
// bucket); the store is opened on o too.
func CreateOn(ctx context.Context, dir string, cfg Config, o objstore.Objects, opt store.CreateOptions) (*store.Store, error) {
	return create(ctx, dir, cfg, opt, o)
}

func create(ctx context.Context, dir string, cfg Config, opt store.CreateOptions, b objstore.Objects) (*store.Store, error) {
	fail := func(err error) (*store.Store, error) { return nil, fmt.Errorf("create store %s: %w", dir, err) }
	if err := checkRemoteConfig(&cfg); err != nil {
		return fail(err)
	}
	if err := checkNoStore(dir); err != nil {
		return fail(err)
	}
	if b == nil {
		var offline, err error
		if b, offline, err = openBucket(ctx, cfg.Config, opt.Logger); err != nil {
			return fail(err)
		}
		if offline != nil {
			return fail(offline)
		}
	}
	attached, err := claimPrefix(ctx, b, cfg.Config)
	if err != nil {
		return fail(err)
	}
	if err := makeRemoteDir(dir, opt); err != nil {
		return fail(err)
	}
	if err := writeRemoteConfig(dir, cfg); err != nil {
		return fail(err)
	}
	s, err := store.OpenRemote(dir, opener(b), store.OpenOptions{Logger: b.Logger()})
	if err != nil {
		return nil, err
	}
	of(s).remote.attached = attached
	return s, nil
}

// checkRemoteConfig checks cfg and makes its credentials file's name
// absolute (later commands may run elsewhere).
func checkRemoteConfig(cfg *Config) error {
	switch {
	case cfg.Bucket == "":
		return errors.New("no bucket")
	case cfg.Endpoint == "":
		return fmt.Errorf("bucket %s: no endpoint", cfg.Bucket)
	case cfg.CacheSize < 0:
		return fmt.Errorf("chunk cache size %d is negative", cfg.CacheSize)
	}
	if cfg.CredentialsFile != "" {
		abs, err := filepath.Abs(cfg.CredentialsFile)
		if err != nil {
			return fmt.Errorf("credentials file: %w", err)
		}
		cfg.CredentialsFile = abs
	}
	return nil
}

// checkNoStore refuses a dir that holds a store, local or remote.
func checkNoStore(dir string) error {
	for _, name := range []string{chunkDir, store.RemoteConfigName} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, name), store.ErrExists)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// claimPrefix makes the bucket's prefix a cairn store, or finds it one
// already (attached). A prefix holding other objects is refused.
func claimPrefix(ctx context.Context, b objstore.Objects, cfg objstore.Config) (attached bool, err error) {
	where := fmt.Sprintf("bucket %s prefix %q", cfg.Bucket, cfg.Prefix)
	data, _, err := b.Get(ctx, storeMarkerKey, 64<<10, nil)
	if err == nil {
		var m storeMarker
		if err := json.Unmarshal(data, &m); err != nil || m.Format != storeMarkerFormat {
			return false, fmt.Errorf("%s: %s is not a cairn store marker", where, storeMarkerKey)
		}
		return true, nil
	}
	if !errors.Is(err, objstore.ErrNotExist) {
		return false, fmt.Errorf("%s: %s: %w", where, storeMarkerKey, err)
	}
	for info, err := range b.List(ctx, "", "") {
		if err != nil {
			return false, fmt.Errorf("%s: %w", where, err)
		}
		return false, fmt.Errorf("%s holds objects (%s, ...) but no cairn store (%s): give an empty prefix", where, info.Key, storeMarkerKey)
	}
	body, err := json.Marshal(storeMarker{Format: storeMarkerFormat, Version: 1, Created: time.Now().UTC()})
	if err != nil {
		return false, err
	}
	_, err = b.Put(ctx, storeMarkerKey, objstore.Cond{IfAbsent: true}, body)
	if errors.Is(err, objstore.ErrPrecondition) {
		return true, nil // another host created the store just now
	}
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", where, storeMarkerKey, err)
	}
	return false, nil
}

// makeRemoteDir lays out a remote store's local directory: the root
// (0700, or the group's 0750 set-group-ID), the chunk cache directory and
// the lock file.
func makeRemoteDir(dir string, opt store.CreateOptions) error {
	if err := store.CreateDir(dir, opt); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(dir, chunkCacheDir), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}
