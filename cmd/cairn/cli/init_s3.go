package cli

import (
	"fmt"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/spf13/cobra"
)

// s3Opts are init's flags of a store in a bucket.
type s3Opts struct {
	url, endpoint, region, credentials, cacheSize string
	pathStyle                                     bool
}

func (o *s3Opts) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.url, "s3", "", "keep the store in a bucket: s3://BUCKET/PREFIX")
	f.StringVar(&o.endpoint, "endpoint", "", "the object store's URL, e.g. https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:9000")
	f.StringVar(&o.region, "region", "", "the bucket's region (default: asked of the server)")
	f.BoolVar(&o.pathStyle, "path-style", false, "address the bucket as URL/BUCKET (MinIO, Ceph RGW) rather than BUCKET.host")
	f.StringVar(&o.credentials, "credentials-file", "", "read the keys from this file (mode 0600) rather than AWS_* variables")
	f.StringVar(&o.cacheSize, "cache-size", "1G", "bound of the on-disk chunk cache in DIR")
}

// given reports whether any flag of a store in a bucket was given.
func (o *s3Opts) given(cmd *cobra.Command) bool {
	for _, f := range []string{"s3", "endpoint", "region", "path-style", "credentials-file", "cache-size"} {
		if cmd.Flags().Changed(f) {
			return true
		}
	}
	return false
}

// config checks the flags and builds the store's configuration.
func (o *s3Opts) config() (s3store.Config, error) {
	var cfg s3store.Config
	switch {
	case o.url == "":
		return cfg, usageErr("--endpoint, --region, --path-style, --credentials-file and --cache-size are for a store in a bucket: give --s3 s3://BUCKET/PREFIX")
	case o.endpoint == "":
		return cfg, usageErr("--s3 needs --endpoint URL (e.g. https://s3.eu-west-1.amazonaws.com)")
	}
	bucket, prefix, err := objstore.ParseURL(o.url)
	if err != nil {
		return cfg, usageErr("--s3 %q: %v", o.url, err)
	}
	cs, err := parseSize(o.cacheSize)
	if err != nil || cs <= 0 {
		return cfg, usageErr("--cache-size %q: want a positive size such as 512M or 10G", o.cacheSize)
	}
	cfg.Config = objstore.Config{Endpoint: o.endpoint, Bucket: bucket, Prefix: prefix, Region: o.region,
		PathStyle: o.pathStyle, CredentialsFile: o.credentials}
	cfg.CacheSize = cs
	return cfg, nil
}

// initRemote creates (or attaches to) a store in a bucket.
func (a *app) initRemote(o s3Opts, opt store.CreateOptions, asJSON bool) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	s, err := s3store.Create(a.ctx, a.storeDir, cfg, opt)
	if err != nil {
		return err
	}
	defer s.Close()
	info, _ := s3store.InfoOf(s)
	where := "s3://" + info.Bucket + "/" + info.Prefix
	switch {
	case asJSON:
		return printJSON(a, initResult{Path: s.Root(), Kind: "s3", URL: where, Endpoint: info.Endpoint, Attached: info.Attached})
	case a.quiet:
	case info.Attached:
		fmt.Fprintf(a.stdout, "attached store %s to the existing store at %s (%s)\n", s.Root(), where, info.Endpoint)
	default:
		fmt.Fprintf(a.stdout, "created store %s at %s (%s)\n", s.Root(), where, info.Endpoint)
	}
	return nil
}
