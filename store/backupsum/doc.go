// Package backupsum owns what a backup reports: the totals of its
// images, file archives and blobs (bytes read, new, stored, zero,
// deduplication and compression ratios), each archive's own figures and
// reference (New, Summary), as text (WriteText) or JSON.
package backupsum
