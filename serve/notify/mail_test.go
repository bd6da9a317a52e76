package notify

import (
	"bytes"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/logtest"
	"github.com/cairnfs/cairn/serve/runlog"
)

// fakeSendmail puts a sendmail first in PATH that writes its arguments
// and standard input to files in the returned directory, one pair per
// run, and exits with the code in the file "exit" there (0 if none).
func fakeSendmail(t *testing.T) string {
	bin, out := t.TempDir(), t.TempDir()
	script := `#!/bin/sh
set -e
n=$$
printf '%s\n' "$@" >"` + out + `/$n.args"
cat >"` + out + `/$n.tmp"
code=$(cat "` + out + `/exit" 2>/dev/null || echo 0)
if [ "$code" != 0 ]; then echo "fake sendmail: refused" >&2; rm "` + out + `/$n.tmp" "` + out + `/$n.args"; exit "$code"; fi
mv "` + out + `/$n.tmp" "` + out + `/$n.msg"
`
	if err := os.WriteFile(filepath.Join(bin, "sendmail"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return out
}

// mails reads the messages the fake sendmail received, with their
// arguments.
func mails(t *testing.T, dir string) (msgs []*mail.Message, args [][]string) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.msg"))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mail.ReadMessage(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		msgs = append(msgs, m)
		a, _ := os.ReadFile(strings.TrimSuffix(n, ".msg") + ".args")
		args = append(args, strings.Fields(string(a)))
	}
	return msgs, args
}

func body(t *testing.T, m *mail.Message) string {
	t.Helper()
	b, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMail: one mail per event of the kinds asked for, an RFC 5322
// message with the run's details, piped to sendmail -t -oi.
func TestMail(t *testing.T) {
	dir := fakeSendmail(t)
	d := New(quick(Options{Mail: &Mail{To: []string{"Ops <ops@example.org>", "root@example.org"}, From: "cairn@backup1.example.org"}}), nil)
	failed := failedEvent()
	d.Notify(failed)
	d.Notify(runEvent(runlog.EventSucceeded, "home")) // not a default kind
	d.Notify(staleEvent())
	closeNow(t, d)
	msgs, args := mails(t, dir)
	if len(msgs) != 2 {
		t.Fatalf("%d mails, want 2 (failed, stale)", len(msgs))
	}
	for _, a := range args {
		if !slices.Equal(a, []string{"-t", "-oi"}) {
			t.Errorf("sendmail run with %q, want -t -oi", a)
		}
	}
	var sawFailed, sawStale bool
	dec := new(mime.WordDecoder)
	for _, m := range msgs {
		h := m.Header
		subject, err := dec.DecodeHeader(h.Get("Subject"))
		if err != nil {
			t.Fatal(err)
		}
		to, err := h.AddressList("To")
		if err != nil || len(to) != 2 || to[0].Address != "ops@example.org" || h.Get("From") != "<cairn@backup1.example.org>" {
			t.Errorf("To %v (%v), From %q", to, err, h.Get("From"))
		}
		if _, err := h.Date(); err != nil || !strings.HasPrefix(h.Get("Message-ID"), "<") || !strings.HasSuffix(h.Get("Message-ID"), "@backup1>") {
			t.Errorf("Date %q (%v), Message-ID %q", h.Get("Date"), err, h.Get("Message-ID"))
		}
		if h.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("Content-Type %q", h.Get("Content-Type"))
		}
		text := body(t, m)
		switch h.Get("X-Cairn-Event") {
		case "failed":
			sawFailed = true
			if subject != failed.Summary {
				t.Errorf("subject %q, want %q", subject, failed.Summary)
			}
			for _, want := range []string{"Job:         nightly (verify)", "UPID:        UPID:h:1", "Duration:    1m30s",
				`Error:       chunk 0a1b "corrupt"\`, "second line", "  chunk 0a1b: digest mismatch — corrupt", "Store:       /srv/store"} {
				if !strings.Contains(text, want) {
					t.Errorf("the mail's body lacks %q:\n%s", want, text)
				}
			}
		case "stale":
			sawStale = true
			if !strings.Contains(text, "Group:       host/web") || !strings.Contains(text, "Maximum age: 26h0m0s") {
				t.Errorf("stale mail's body:\n%s", text)
			}
		}
	}
	if !sawFailed || !sawStale {
		t.Errorf("mails for failed %v, stale %v", sawFailed, sawStale)
	}
}

// TestMailLongSummary: a summary holding a long error makes a subject
// cut at maxSubject characters (whole characters, marked), while the
// body has the summary whole.
func TestMailLongSummary(t *testing.T) {
	m, err := newMailer(Mail{To: []string{"root@example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := failedEvent()
	ev.Summary = `verify job "nightly" failed: ` + strings.Repeat("chunk ä corrupt; ", 40)
	raw, err := m.message(ev, t0)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	if r := []rune(subject); len(r) != maxSubject+1 || !strings.HasSuffix(subject, "…") || !strings.HasPrefix(ev.Summary, strings.TrimSuffix(subject, "…")) {
		t.Errorf("subject %q (%d characters)", subject, len(r))
	}
	body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if !strings.Contains(string(body), strings.TrimSpace(ev.Summary)) {
		t.Errorf("the body lacks the whole summary:\n%s", body)
	}
}

// TestMailHostileSummary: a summary with line breaks cannot add headers
// (it becomes one line of the subject), a sendmail that fails is
// retried and logged with its error output, and a missing sendmail is
// logged.
func TestMailHostileSummary(t *testing.T) {
	dir := fakeSendmail(t)
	d := New(quick(Options{Mail: &Mail{To: []string{"root@example.org"}}}), nil)
	ev := failedEvent()
	ev.Summary = "failed\r\nBcc: victim@example.org\r\n\r\nbody"
	d.Notify(ev)
	closeNow(t, d)
	msgs, _ := mails(t, dir)
	if len(msgs) != 1 || msgs[0].Header.Get("Bcc") != "" || !strings.Contains(msgs[0].Header.Get("Subject"), "Bcc: victim") {
		t.Fatalf("%d mails, Bcc %q: the summary's line breaks made headers", len(msgs), msgs[0].Header.Get("Bcc"))
	}
	if !strings.HasPrefix(msgs[0].Header.Get("From"), "<cairn@") {
		t.Errorf("default From %q", msgs[0].Header.Get("From"))
	}

	m, err := newMailer(Mail{To: []string{"root@example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	m.to = append(m.to, "x@y\nBcc: z@w") // as if a check were missed
	if _, err := m.message(ev, t0); err == nil || !strings.Contains(err.Error(), "line break") {
		t.Errorf("a header value with a line break: %v, want refused", err)
	}

	if err := os.WriteFile(filepath.Join(dir, "exit"), []byte("75\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log, logs := logtest.Logger()
	d = New(quick(Options{Mail: &Mail{To: []string{"root@example.org"}}}), log)
	d.Notify(ev)
	closeNow(t, d)
	if logs.Count("will retry") != 2 || logs.Count("not delivered") != 1 || !strings.Contains(logs.String(), "fake sendmail: refused") {
		t.Errorf("a failing sendmail:\n%s", logs)
	}

	log, logs = logtest.Logger()
	d = New(quick(Options{Mail: &Mail{To: []string{"root@example.org"}, Sendmail: "no-such-sendmail"}}), log)
	d.Notify(ev)
	closeNow(t, d)
	if !strings.Contains(logs.String(), "no-such-sendmail: not found") {
		t.Errorf("a missing sendmail:\n%s", logs)
	}
}
