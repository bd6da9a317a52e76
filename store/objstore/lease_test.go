package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
)

// Two clients (two Buckets on one bucket): the second cannot take a lease
// the first holds and renews; its error names the holder. After Release
// the second gets it at once.
func TestLeaseExclusive(t *testing.T) { eachBucket(t, testLeaseExclusive) }

func testLeaseExclusive(t *testing.T, h hosts) {
	a, b := h.a, h.b
	ctx := context.Background()
	ha := objstore.Holder{Host: "hosta", PID: 1, Command: "backup", Data: []byte(`{"base":"x"}`)}
	const ttl = 2 * time.Second
	la, err := objstore.Acquire(ctx, a, "leases/g", ha, ttl, 0)
	if err != nil {
		t.Fatal(err)
	}
	if la.Start().IsZero() {
		t.Fatal("no start")
	}
	// Longer than the TTL: a renewed lease is not taken over.
	for range 7 {
		h.pass(ttl / 5)
	}
	_, err = objstore.Acquire(ctx, b, "leases/g", objstore.Holder{Host: "hostb", Command: "gc"}, ttl, 0)
	var he *objstore.HeldError
	if !errors.As(err, &he) || !errors.Is(err, objstore.ErrHeld) {
		t.Fatalf("second acquire: %v", err)
	}
	if he.Holder.Host != "hosta" || he.Holder.Command != "backup" || !strings.Contains(err.Error(), `"hosta"`) ||
		!strings.Contains(err.Error(), "PID 1 ") || !strings.Contains(err.Error(), la.Start().UTC().Format(time.RFC3339)) {
		t.Fatalf("held error names %+v: %v", he.Holder, err)
	}
	if !he.Holder.Start.Equal(la.Start()) {
		t.Fatalf("holder start %v, lease start %v", he.Holder.Start, la.Start())
	}
	select {
	case <-la.Lost():
		t.Fatal("lease lost while renewed")
	default:
	}
	infos, err := objstore.Leases(ctx, b, "leases/")
	if err != nil || len(infos) != 1 || infos[0].Expired || string(infos[0].Holder.Data) != `{"base":"x"}` || infos[0].Key != "leases/g" {
		t.Fatalf("leases: %+v %v", infos, err)
	}
	if err := la.Update(ctx, []byte(`{"phase":"sweep"}`)); err != nil {
		t.Fatal(err)
	}
	infos, err = objstore.Leases(ctx, b, "leases/")
	if err != nil || len(infos) != 1 || string(infos[0].Holder.Data) != `{"phase":"sweep"}` {
		t.Fatalf("leases after update: %+v %v", infos, err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lb, err := objstore.Acquire(ctx, b, "leases/g", objstore.Holder{Host: "hostb"}, ttl, 0)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if infos, err := objstore.Leases(ctx, b, "leases/"); err != nil || len(infos) != 0 {
		t.Fatalf("leases after release: %+v %v", infos, err)
	}
}

// A holder that stops renewing (its host died: here its lease object is
// left as is) is taken over once its TTL passed by the server's clock;
// a holder that did not renew in time sees Lost when taken over.
func TestLeaseExpiryTakeover(t *testing.T) { eachBucket(t, testLeaseExpiryTakeover) }

func testLeaseExpiryTakeover(t *testing.T, h hosts) {
	a, b := h.a, h.b
	ctx := context.Background()
	const ttl = 2 * time.Second
	// A dead holder: a lease object written as Acquire does, never renewed.
	dead := `{"holder":{"host":"dead","pid":7,"command":"backup","start":"2020-01-01T00:00:00Z"},"token":"t","ttl_ms":2000,"seq":1}`
	if _, err := a.Put(ctx, "l", objstore.Cond{IfAbsent: true}, []byte(dead)); err != nil {
		t.Fatal(err)
	}
	if infos, err := objstore.Leases(ctx, b, ""); err != nil || len(infos) != 1 || infos[0].Expired {
		t.Fatalf("fresh dead lease: %+v %v", infos, err)
	}
	if _, err := objstore.Acquire(ctx, b, "l", objstore.Holder{Host: "b"}, ttl, 0); !errors.Is(err, objstore.ErrHeld) {
		t.Fatalf("took over a lease within its TTL: %v", err)
	}
	h.pass(ttl + 1100*time.Millisecond) // the TTL and a second's slack (HTTP dates)
	lb, err := objstore.Acquire(ctx, b, "l", objstore.Holder{Host: "b"}, ttl, 0)
	if err != nil {
		t.Fatalf("takeover: %v", err)
	}
	if infos, err := objstore.Leases(ctx, b, ""); err != nil || len(infos) != 1 || infos[0].Holder.Host != "b" || infos[0].Expired {
		t.Fatalf("after takeover: %+v %v", infos, err)
	}

	// Lost: another holder overwrites the lease (as a takeover does);
	// the next renewal (every TTL/5) finds a foreign ETag.
	cur, err := a.Head(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, "l", objstore.Cond{IfMatch: cur.ETag}, []byte(dead)); err != nil {
		t.Fatal(err)
	}
	h.pass(ttl / 5)
	waitLost(t, lb, "a takeover")
	if err := lb.Update(ctx, nil); err == nil {
		t.Fatal("update of a lost lease succeeded")
	}
	// Release of a lost lease does not delete the new holder's object.
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Head(ctx, "l"); err != nil {
		t.Fatalf("release of a lost lease deleted the other's: %v", err)
	}
}

// A garbage lease object expires after the default TTL and until then is
// listed as held by nobody known.
func TestLeaseGarbage(t *testing.T) { eachBucket(t, testLeaseGarbage) }

func testLeaseGarbage(t *testing.T, h hosts) {
	a := h.a
	ctx := context.Background()
	if _, err := a.Put(ctx, "g", objstore.Cond{}, []byte("not json")); err != nil {
		t.Fatal(err)
	}
	infos, err := objstore.Leases(ctx, a, "")
	if err != nil || len(infos) != 1 || infos[0].Expired || infos[0].Holder.Host != "" {
		t.Fatalf("garbage lease: %+v %v", infos, err)
	}
	_, err = objstore.Acquire(ctx, a, "g", objstore.Holder{}, 2*time.Second, 0)
	if !errors.Is(err, objstore.ErrHeld) {
		t.Fatalf("acquire over a garbage lease: %v", err)
	}
	// Oversized, and with a TTL of years or a negative one: listed, held
	// (a day at most, or the default TTL), never read whole.
	bodies := map[string]string{
		"huge":  `{"holder":{"host":"h"},"token":"t","ttl_ms":99999999999999,"data":"` + strings.Repeat("x", 70<<10) + `"}`,
		"years": `{"holder":{"host":"y"},"token":"t","ttl_ms":99999999999999}`,
		"neg":   `{"holder":{"host":"n"},"token":"t","ttl_ms":-5}`,
	}
	for k, body := range bodies {
		if _, err := a.Put(ctx, k, objstore.Cond{}, []byte(body)); err != nil {
			t.Fatal(err)
		}
		if _, err := objstore.Acquire(ctx, a, k, objstore.Holder{}, 2*time.Second, 0); !errors.Is(err, objstore.ErrHeld) {
			t.Fatalf("acquire over %s: %v", k, err)
		}
	}
	if infos, err := objstore.Leases(ctx, a, ""); err != nil || len(infos) != 4 {
		t.Fatalf("hostile leases: %+v %v", infos, err)
	}
	if _, err := objstore.Acquire(ctx, a, "x", objstore.Holder{}, time.Millisecond, 0); err == nil {
		t.Fatal("a TTL of 1 ms accepted")
	}
}

// A lease whose process ended on this machine (as after kill -9, or a
// backup that gave up while the server was down) is taken over at once;
// one of a live process, or of another machine, is not.
func TestLeaseDeadLocalHolder(t *testing.T) { eachBucket(t, testLeaseDeadLocalHolder) }

func testLeaseDeadLocalHolder(t *testing.T, h hosts) {
	a := h.a
	ctx := context.Background()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	body := func(node string, pid int) []byte {
		return []byte(fmt.Sprintf(`{"holder":{"host":"h","command":"backup"},"token":"t","ttl_ms":300000,"node":%q,"pid":%d}`, node, pid))
	}
	for key, data := range map[string][]byte{
		"live":  body(objstore.LocalNode(), os.Getppid()),
		"other": body("another-boot/pid:[1]", dead),
		"dead":  body(objstore.LocalNode(), dead),
	} {
		if _, err := a.Put(ctx, key, objstore.Cond{}, data); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := objstore.Leases(ctx, a, "")
	if err != nil || len(infos) != 3 {
		t.Fatal(infos, err)
	}
	for _, li := range infos {
		if li.Expired != (li.Key == "dead") {
			t.Errorf("lease %s: expired %v", li.Key, li.Expired)
		}
	}
	for _, key := range []string{"live", "other"} {
		if _, err := objstore.Acquire(ctx, a, key, objstore.Holder{}, 2*time.Second, 0); !errors.Is(err, objstore.ErrHeld) {
			t.Errorf("acquire over %s: %v", key, err)
		}
	}
	l, err := objstore.Acquire(ctx, a, "dead", objstore.Holder{Host: "me"}, 2*time.Second, 0)
	if err != nil {
		t.Fatalf("acquire over a dead local holder: %v", err)
	}
	l.Release(ctx) //nolint:errcheck
}

// Rule 1 (docs/design/store.md): two hosts take over one expired lease
// at once; both read it expired, then both write it If-Match the ETag
// they read (a pause point holds the first write until the second
// comes). The bucket accepts one: exactly one of them holds the lease.
func TestLeaseTakeoverRace(t *testing.T) {
	ctx := context.Background()
	b := memstore.New(objstore.Config{})
	const ttl = 2 * time.Second
	dead := `{"holder":{"host":"dead"},"token":"t","ttl_ms":2000,"seq":1}`
	if _, err := b.Put(ctx, "l", objstore.Cond{IfAbsent: true}, []byte(dead)); err != nil {
		t.Fatal(err)
	}
	b.Advance(ttl + 1100*time.Millisecond)
	var both sync.WaitGroup // the two takeovers' writes, held until both came
	both.Add(2)
	var writes atomic.Int32
	b.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpPut && !c.Cond.IfAbsent && writes.Add(1) <= 2 {
			both.Done()
			both.Wait()
		}
		return nil
	})
	type result struct {
		l   *objstore.Lease
		err error
	}
	results := make(chan result, 2)
	for _, host := range []string{"a", "b"} {
		go func() {
			l, err := objstore.Acquire(ctx, b, "l", objstore.Holder{Host: host}, ttl, 0)
			results <- result{l, err}
		}()
	}
	held := 0
	for range 2 {
		r := <-results
		switch {
		case r.err == nil:
			held++
			defer r.l.Release(ctx) //nolint:errcheck
		case !errors.Is(r.err, objstore.ErrHeld):
			t.Fatalf("takeover: %v", r.err)
		}
	}
	if held != 1 {
		t.Fatalf("%d hosts hold the lease after taking it over at once, want 1", held)
	}
}

// Rule 1: a holder whose renewals fail (the bucket answers errors) keeps
// the lease until half its TTL has passed without one, then loses it,
// while the lease is still live for everyone else: the holder stops
// before another can take the lease over.
func TestLeaseLostWhenRenewalsFail(t *testing.T) {
	ctx := context.Background()
	b := memstore.New(objstore.Config{})
	const ttl = 2 * time.Second
	l, err := objstore.Acquire(ctx, b, "l", objstore.Holder{Host: "a"}, ttl, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx) //nolint:errcheck
	b.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpPut {
			return errors.New("injected: 503 Service Unavailable")
		}
		return nil
	})
	b.Advance(ttl / 5)
	b.Advance(ttl / 5) // taken once the first failed renewal is done
	select {
	case <-l.Lost():
		t.Fatal("lost after one failed renewal, within half the TTL")
	default:
	}
	b.Advance(ttl / 5) // the second failed renewal is done; this one is past TTL/2
	waitLost(t, l, "renewals failing for half the TTL")
	b.SetHook(nil)
	if _, err := objstore.Acquire(ctx, b, "l", objstore.Holder{Host: "b"}, ttl, 0); !errors.Is(err, objstore.ErrHeld) {
		t.Fatalf("another host took the lease as its holder gave it up: %v", err)
	}
}
