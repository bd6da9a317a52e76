// Package directio owns what O_DIRECT asks of memory: the alignment of
// buffers, offsets and lengths, and reusable buffers that start on it.
// The store reads chunk files with it and restore writes images with it.
package directio
