package jobs

// Chunk read orders of the kinds that read every chunk of a selection
// (verify, tape-export); OrderAuto picks by the store's disk (see
// PathRotational).
const (
	OrderAuto  = "auto"
	OrderInode = "inode"
	OrderIndex = "index"
)
