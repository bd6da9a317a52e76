package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// clock is a time the test sets.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// A watched group is reported stale once, again a day later while it
// stays stale, and fresh once when it has a new snapshot; a group
// without any snapshot is stale from the start.
func TestStaleness(t *testing.T) {
	s, _ := testStore(t)
	g := store.Group{Type: store.TypeHost, ID: "web"}
	t0 := time.Now().Add(-10 * 24 * time.Hour).Truncate(time.Second)
	storetest.BackupImage(t, s, g, t0, storetest.Image{Data: storetest.RandBytes("web", 4096)})
	clk := &clock{now: t0.Add(30 * time.Minute)}
	ev := newEvents()
	d, err := New(Options{Store: s, Notifier: ev, Now: clk.Now, Stale: []StaleSpec{
		{Group: "host/web", MaxAge: time.Hour}, {Namespace: "", Group: "host/gone", MaxAge: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	ctx := context.Background()
	check := func(at time.Duration, want ...string) {
		t.Helper()
		clk.set(t0.Add(at))
		before := len(ev.all)
		d.CheckStale(ctx)
		var got []string
		for _, e := range ev.all[before:] {
			got = append(got, fmt.Sprintf("%s %s", e.Kind, e.Group.Name()))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("at t0+%s: events %q, want %q", at, got, want)
		}
	}
	check(30*time.Minute, "stale host/gone")
	check(2*time.Hour, "stale host/web")
	check(3 * time.Hour)
	check(25*time.Hour, "stale host/gone")
	check(26*time.Hour, "stale host/web")
	check(27 * time.Hour)
	storetest.BackupImage(t, s, g, t0.Add(27*time.Hour), storetest.Image{Data: storetest.RandBytes("web2", 4096)})
	check(27*time.Hour+time.Minute, "fresh host/web")
	check(27*time.Hour + 2*time.Minute)
	check(29*time.Hour, "stale host/web")
	for _, gr := range d.Status().Groups {
		if gr.Name() == "host/web" && (!gr.Newest.Equal(t0.Add(27*time.Hour)) || gr.MaxAge != time.Hour) {
			t.Errorf("status group %+v", gr)
		}
	}
}

// A reload that fails (the hook's error, or a configuration the daemon
// refuses) keeps the old configuration; one that works replaces it.
func TestReloadKeepsOldOnError(t *testing.T) {
	s, _ := testStore(t)
	hour := every{time.Hour}
	var next func() (Options, error)
	d, err := New(Options{Store: s, Jobs: []JobSpec{{Name: "old", Kind: "gc", Schedule: hour}},
		Reload: func() (Options, error) { return next() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	names := func() string {
		var out []string
		for n := range d.Status().Next {
			out = append(out, n)
		}
		return strings.Join(out, ",")
	}
	for _, bad := range []func() (Options, error){
		func() (Options, error) { return Options{}, errors.New("/etc/cairn/serve.toml: line 3: bad") },
		func() (Options, error) {
			return Options{Jobs: []JobSpec{{Name: "x", Kind: "nope", Schedule: hour}}}, nil
		},
		func() (Options, error) { return Options{Jobs: []JobSpec{{Name: "x", Kind: "gc"}}}, nil },
	} {
		next = bad
		d.doReload()
		if got := names(); got != "old" {
			t.Errorf("after a failed reload: jobs %q, want the old ones", got)
		}
	}
	next = func() (Options, error) {
		return Options{Jobs: []JobSpec{{Name: "new", Kind: "verify", Schedule: hour}}}, nil
	}
	d.doReload()
	if got := names(); got != "new" {
		t.Errorf("after a reload: jobs %q, want new", got)
	}
}

// What the daemon cannot run is refused with the job, its line and
// what is wrong.
func TestBadOptions(t *testing.T) {
	s, _ := testStore(t)
	hour := every{time.Hour}
	for _, c := range []struct {
		name string
		opt  Options
		want string
	}{
		{"no store", Options{}, "no store"},
		{"no name", Options{Store: s, Jobs: []JobSpec{{Kind: "gc", Schedule: hour, Line: 4}}}, "job (line 4): no name"},
		{"twice", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "gc", Schedule: hour}, {Name: "a", Kind: "gc", Schedule: hour, Line: 9}}}, `job "a" (line 9): name given twice`},
		{"kind", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "defrag", Schedule: hour}}}, `kind "defrag": want one of backup, gc`},
		{"schedule", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "gc"}}}, "no schedule"},
		{"param", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "verify", Schedule: hour, Params: map[string]string{"speed": "9"}}}}, `has no parameter "speed"`},
		{"param value", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "gc", Schedule: hour, Params: map[string]string{"atime-cutoff": "-1h"}}}}, "atime-cutoff"},
		{"group elsewhere", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "gc", Schedule: hour, Group: "vm/1"}}}, "backup job's"},
		{"backup group", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "backup", Schedule: hour, Group: "vm", Sources: []string{"a.pxar:/"}}}}, "want TYPE/ID"},
		{"backup sources", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "backup", Schedule: hour, Group: "vm/1"}}}, "sources"},
		{"backup stdin", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "backup", Schedule: hour, Group: "vm/1", Sources: []string{"a.img:-"}}}}, "standard input"},
		{"ns", Options{Store: s, Jobs: []JobSpec{{Name: "a", Kind: "verify", Schedule: hour, Namespace: "../x"}}}, "ns"},
		{"stale group", Options{Store: s, Stale: []StaleSpec{{Group: "web", MaxAge: time.Hour, Line: 7}}}, "stale (line 7): group \"web\""},
		{"stale type", Options{Store: s, Stale: []StaleSpec{{Group: "pc/web", MaxAge: time.Hour}}}, "pc/web"},
		{"stale age", Options{Store: s, Stale: []StaleSpec{{Group: "vm/1"}}}, "max age"},
	} {
		_, err := New(c.opt)
		if err == nil || !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// The daemon tells systemd it is ready (NOTIFY_SOCKET, an abstract
// socket here), serves /healthz and the handlers given, and tells it is
// stopping.
func TestReadinessAndHTTP(t *testing.T) {
	s, _ := testStore(t)
	name := fmt.Sprintf("@cairn-serve-test-%d", time.Now().UnixNano())
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "\x00" + name[1:], Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	t.Setenv("NOTIFY_SOCKET", name)
	d, stop := start(t, Options{Store: s, Listen: "127.0.0.1:0", Handlers: map[string]http.Handler{
		"/hello": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") })}})
	read := func() string {
		buf := make([]byte, 256)
		// A bound for a failure, not a figure: a daemon that never tells
		// fails here with every goroutine's stack, to show where it is.
		dl := time.Now().Add(2 * time.Minute)
		if tdl, ok := t.Deadline(); ok && tdl.Add(-5*time.Second).Before(dl) {
			dl = tdl.Add(-5 * time.Second)
		}
		sock.SetReadDeadline(dl)
		n, err := sock.Read(buf)
		if err != nil {
			var stacks strings.Builder
			pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Fatalf("%v; status %+v\n%s", err, d.Status(), stacks.String())
		}
		return string(buf[:n])
	}
	if got := read(); got != "READY=1" {
		t.Fatalf("first notification %q", got)
	}
	for path, want := range map[string]string{"/healthz": "ok\n", "/hello": "hi"} {
		resp, err := http.Get("http://" + d.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != want {
			t.Errorf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
	stop()
	if got := read(); got != "STOPPING=1" {
		t.Errorf("notification at stop %q", got)
	}
	if _, err := http.Get("http://" + d.Addr() + "/healthz"); err == nil {
		t.Errorf("the listener still answers after Run returned")
	}
}

// NOTIFY_SOCKET that is neither a path nor abstract is refused, a path
// socket works, none does nothing.
func TestSdNotify(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if err := sdNotify("READY=1"); err != nil {
		t.Errorf("without NOTIFY_SOCKET: %v", err)
	}
	t.Setenv("NOTIFY_SOCKET", "relative")
	if err := sdNotify("READY=1"); err == nil {
		t.Errorf("relative NOTIFY_SOCKET accepted")
	}
	path := t.TempDir() + "/notify"
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	t.Setenv("NOTIFY_SOCKET", path)
	if err := sdNotify("READY=1"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := sock.Read(buf)
	if string(buf[:n]) != "READY=1" {
		t.Errorf("got %q", buf[:n])
	}
	t.Setenv("NOTIFY_SOCKET", t.TempDir()+"/none")
	if err := sdNotify("READY=1"); err == nil || !strings.Contains(err.Error(), "NOTIFY_SOCKET") {
		t.Errorf("missing socket: %v", err)
	}
}
