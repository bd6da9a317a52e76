// Package snapdiff owns the comparison of two snapshots of one store
// (cairn diff): which archives were added, removed or changed (Differ,
// ArchiveNames), the paths of two file archives merged in name order in
// bounded memory (Trees), the chunks of two indexes (Indexes), and the
// report as text lines or one streamed JSON document (Writer, Report).
package snapdiff
