package memstore

import (
	"context"
	"strings"

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
	LieNone        Lie = iota
	LiePhantom         // OpHead: a missing object is said to exist (Call.Info, or size 1, now)
	LieNotStored       // OpPut: answered as done (the ETag of an empty body) without storing
	LieNoop            // OpTouch: answered without moving the time (Call.Info.LastModified, or the object's); OpDelete: not deleted
	LieOmit            // OpListKey: the key is left out (a listing that lags)
	LieRepeat          // OpListKey: the key is listed twice
	LieCondIgnored     // OpPut: the condition (If-None-Match, If-Match) is ignored: the object is written over
)

// A server that refuses a conditional write (S3's 501 NotImplemented) is
// a Hook that returns objstore.ErrNotImplemented for a Put whose Cond is
// set: RefuseConds.

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

// RefuseConds is a Hook of a server that refuses conditional writes
// (501 NotImplemented) of keys under prefix, then runs next (nil: none).
func RefuseConds(prefix string, next Hook) Hook {
	return func(ctx context.Context, c *Call) error {
		if c.Op == OpPut && (c.Cond.IfAbsent || c.Cond.IfMatch != "") && strings.HasPrefix(c.Key, prefix) {
			return objstore.ErrNotImplemented
		}
		if next != nil {
			return next(ctx, c)
		}
		return nil
	}
}

// IgnoreConds is a Hook of a server that ignores the conditions of
// writes of keys under prefix (it writes over what is there), then runs
// next (nil: none).
func IgnoreConds(prefix string, next Hook) Hook {
	return func(ctx context.Context, c *Call) error {
		if c.Op == OpPut && strings.HasPrefix(c.Key, prefix) {
			c.Lie = LieCondIgnored
		}
		if next != nil {
			return next(ctx, c)
		}
		return nil
	}
}
