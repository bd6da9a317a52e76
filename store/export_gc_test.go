package store

// SetGCBeforeDelete sets the hook the remote GC's sweep runs before each
// delete request (nil: none).
func SetGCBeforeDelete(f func(keys []string)) { gcBeforeDelete = f }

// ChunkKey is chunk d's key in a remote store's bucket.
var ChunkKey = chunkKey
