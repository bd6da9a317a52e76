package memstore

import (
	"context"

	"github.com/cairnfs/cairn/store/objstore"
)

// Op names a call.
type Op string

// The calls a Hook sees.
const (
	OpGet     Op = "get"
	OpPut     Op = "put"
	OpHead    Op = "head"
	OpTouch   Op = "touch"
	OpDelete  Op = "delete"   // once per key
	OpList    Op = "list"     // a listing's start (Key: the prefix)
	OpListKey Op = "list-key" // each key a listing is about to yield
)

// Lie is an answer that is not the truth, set by a Hook on a Call.
type Lie int

// The lies of an object store that a test can make.
const (
	LieNone      Lie = iota
	LiePhantom       // OpHead: a missing object is said to exist (Call.Info, or size 1, now)
	LieNotStored     // OpPut: answered as done (the ETag of an empty body) without storing
	LieNoop          // OpTouch: answered without moving the time (Call.Info.LastModified, or the object's); OpDelete: not deleted
	LieOmit          // OpListKey: the key is left out (a listing that lags)
	LieRepeat        // OpListKey: the key is listed twice
)

// Call is one call as a Hook sees it.
type Call struct {
	Op   Op
	Key  string
	Cond objstore.Cond // OpPut
	// Set by the hook:
	Lie  Lie
	Info objstore.ObjectInfo // what LiePhantom or LieNoop answers
}

// Hook sees each call before it is served. Its error fails the call;
// it may block (until ctx ends or the test lets it go) and may set
// c.Lie.
type Hook func(ctx context.Context, c *Call) error
