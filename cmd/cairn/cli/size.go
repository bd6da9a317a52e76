package cli

import "github.com/cairnfs/cairn/jobs"

// parseSize parses a byte size with an optional binary suffix (8k, 4M,
// 1G, 4MiB, 65536), as job parameters take them.
func parseSize(s string) (int64, error) { return jobs.ParseSize(s) }
