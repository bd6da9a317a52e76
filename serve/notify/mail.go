package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnfs/cairn/serve/runlog"
)

// mailer is a Mail ready to send.
type mailer struct {
	kinds    map[runlog.EventKind]bool
	from     string
	to       []string
	sendmail string
}

// newMailer checks m: every address, the program's name.
func newMailer(m Mail) (*mailer, error) {
	fail := func(err error) (*mailer, error) { return nil, fmt.Errorf("notify: mail: %w", err) }
	k, err := kinds(m.Events)
	if err != nil {
		return fail(err)
	}
	ml := &mailer{kinds: k, sendmail: m.Sendmail}
	if len(m.To) == 0 {
		return fail(errors.New("to: no recipient"))
	}
	for _, a := range m.To {
		addr, err := checkAddress("to", a)
		if err != nil {
			return fail(err)
		}
		ml.to = append(ml.to, addr)
	}
	from := m.From
	if from == "" {
		host, _ := os.Hostname()
		from = "cairn@" + host
	}
	if ml.from, err = checkAddress("from", from); err != nil {
		return fail(err)
	}
	if ml.sendmail == "" {
		ml.sendmail = "sendmail"
	}
	if strings.ContainsAny(ml.sendmail, "\x00\r\n") {
		return fail(fmt.Errorf("sendmail: %q is not a program's name", ml.sendmail))
	}
	return ml, nil
}

// program finds the sendmail to run: a path as given, a name in PATH,
// else in the directories sendmail lives in (not in every PATH).
func (m *mailer) program() (string, error) {
	if strings.Contains(m.sendmail, "/") {
		return m.sendmail, nil
	}
	if p, err := exec.LookPath(m.sendmail); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/lib"} {
		p := filepath.Join(dir, m.sendmail)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH, /usr/sbin or /usr/lib", m.sendmail)
}

// send pipes one message about ev to `sendmail -t -oi`.
func (m *mailer) send(ctx context.Context, ev runlog.Event) error {
	msg, err := m.message(ev, time.Now())
	if err != nil {
		return permanent(err)
	}
	prog, err := m.program()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, prog, "-t", "-oi")
	cmd.Stdin = bytes.NewReader(msg)
	stderr := &limitedBuffer{max: 2048}
	cmd.Stderr = stderrTail{stderr}
	cmd.WaitDelay = 5 * time.Second // a child that keeps the pipes open cannot hold us
	if err := cmd.Run(); err != nil {
		if s := strings.TrimSpace(oneline(stderr.String())); s != "" {
			return fmt.Errorf("%s: %w: %s", prog, err, s)
		}
		return fmt.Errorf("%s: %w", prog, err)
	}
	return nil
}

// stderrTail keeps the first bytes of a program's error output and
// drops the rest without failing the program's writes.
type stderrTail struct{ b *limitedBuffer }

func (s stderrTail) Write(p []byte) (int, error) {
	if room := s.b.max - s.b.Len(); room > 0 {
		_, _ = s.b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// maxSubject bounds a Subject in characters: a summary carries a run's
// first error, which the body gives whole.
const maxSubject = 100

// message is the RFC 5322 message about ev, written at now.
func (m *mailer) message(ev runlog.Event, now time.Time) ([]byte, error) {
	subject := oneline(ev.Summary)
	if strings.TrimSpace(subject) == "" {
		subject = "cairn: " + string(ev.Kind)
	}
	if r := []rune(subject); len(r) > maxSubject {
		subject = string(r[:maxSubject]) + "…"
	}
	host := ev.Host
	if host == "" || strings.ContainsAny(host, "<>@ \t\r\n") {
		host = "localhost"
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	headers := [][2]string{
		{"From", m.from},
		{"To", strings.Join(m.to, ", ")},
		{"Subject", mime.QEncoding.Encode("utf-8", strings.ToValidUTF8(subject, "\uFFFD"))},
		{"Date", now.Format(time.RFC1123Z)},
		{"Message-ID", "<" + hex.EncodeToString(id) + "." + fmt.Sprint(now.UnixNano()) + "@" + host + ">"},
		{"MIME-Version", "1.0"},
		{"Content-Type", "text/plain; charset=utf-8"},
		{"Content-Transfer-Encoding", "quoted-printable"},
		{"Auto-Submitted", "auto-generated"},
		{"X-Cairn-Event", string(ev.Kind)},
	}
	var b bytes.Buffer
	for _, h := range headers {
		if err := checkHeader(h[0], h[1]); err != nil {
			return nil, fmt.Errorf("mail header %w", err)
		}
		fmt.Fprintf(&b, "%s: %s\n", h[0], h[1])
	}
	b.WriteString("\n")
	b.Write(quotedPrintable(mailBody(ev, now)))
	return b.Bytes(), nil
}
