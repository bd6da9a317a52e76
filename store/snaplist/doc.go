// Package snaplist owns the listing of snapshots cairn snapshots prints:
// a row a snapshot from its manifest's summary (Row, RowOf), the groups'
// sums (Group, Groups) and the groups without snapshots (EmptyGroups),
// a snapshot's archives (ArchiveRows, WriteArchives),
// as text (Write) or as the rows --json prints; and the names of groups
// and snapshots a shell completes (CompleteRefs).
package snaplist
