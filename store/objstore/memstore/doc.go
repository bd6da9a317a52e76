// Package memstore is an in-memory bucket (objstore.Objects) for tests:
// objects in a map, the S3 semantics the store relies on (conditional
// writes decided against the current object, Get reads the latest write,
// listings in key order after a key, LastModified from the bucket's own
// clock, which a test may move on), and fault injection, after kopia's
// blobtesting and restic's mem backend.
//
// A Hook sees every call before it is served, on the caller's goroutine:
//
//	b := memstore.New(objstore.Config{Bucket: "test"})
//	b.SetHook(func(ctx context.Context, c *memstore.Call) error {
//		if c.Op == memstore.OpHead && strings.HasPrefix(c.Key, ".chunks/") {
//			c.Lie = memstore.LiePhantom // a stale cache: "it exists"
//		}
//		return nil
//	})
//
// A hook may fail the call (its error, wrapped as objstore's errors are;
// objstore.ErrNotExist and ErrPrecondition keep their classes), block it
// until the test lets it go (a pause point between any two calls: the
// interleaving that would break a rule is made, not waited for), or set
// a Lie: a Head that says a missing object exists (a stale cache), a Put
// answered as done without storing, a Touch answered without moving the
// object's time, a key left out of a listing (a listing that lags) or
// listed twice, a Put whose condition is ignored (IgnoreConds: a server
// that writes over what is there). RefuseConds is a server that refuses
// conditional writes (501 NotImplemented). Answers then go through objstore's checks of answers as
// objstore.Bucket's do (CheckPutETag, CheckTouch), so a test sees what
// the real client would make of the lie.
//
// The bucket's clock (clock.go) is the host's plus what Advance added:
// LastModified, ServerTime and the leases' clock (objstore.LeaseClock)
// read it, so that Advance expires leases, ages chunks past a GC's
// cutoff and hands the lease renewals it reaches over before it
// returns: a test makes a renewal happen, or fail for half the TTL,
// instead of waiting for it.
package memstore
