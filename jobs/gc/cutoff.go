package gc

import "github.com/cairnfs/cairn/store"

// WriterMargin is subtracted from the oldest running writer's start, as
// PBS subtracts 300 s (store.GCWriterMargin: the store's collector
// computes the cutoff, in the clock its chunks' times are in).
const WriterMargin = store.GCWriterMargin
