package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/template"
	"time"
	"unicode"

	"github.com/cairnfs/cairn/serve/runlog"
)

// maxRendered bounds what a template may make (a URL, a header, a body).
const maxRendered = 1 << 20

// funcs are the functions templates may call beside text/template's.
var funcs = template.FuncMap{
	// json is v as JSON: a string quoted and escaped, so that
	// {"text": {{json .Summary}}} is valid whatever the summary holds.
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	// oneline is s with every control character (line breaks
	// included) a space, for headers and titles.
	"oneline": oneline,
}

func oneline(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// webhook is a Webhook ready to send.
type webhook struct {
	name        string
	kinds       map[runlog.EventKind]bool
	method      string
	contentType string
	url         *template.Template
	body        *template.Template // nil: the Event as JSON
	headers     map[string]*template.Template
	client      *http.Client
	timeout     time.Duration // 0: the dispatcher's
}

// compileWebhook checks w (the i-th webhook) and parses its templates.
func compileWebhook(w Webhook, i int) (*webhook, error) {
	h := &webhook{name: w.Name, method: strings.ToUpper(w.Method), contentType: w.ContentType,
		headers: map[string]*template.Template{}, client: &http.Client{}, timeout: w.Timeout}
	if h.name == "" {
		h.name = fmt.Sprintf("webhook %d", i+1)
	}
	fail := func(err error) (*webhook, error) {
		return nil, fmt.Errorf("notify: webhook %q: %w", h.name, err)
	}
	if h.method == "" {
		h.method = http.MethodPost
	}
	if h.timeout < 0 {
		return fail(errors.New("timeout: negative"))
	}
	if h.contentType == "" {
		h.contentType = "application/json"
	}
	var err error
	if h.kinds, err = kinds(w.Events); err != nil {
		return fail(err)
	}
	if !validToken(h.method) {
		return fail(fmt.Errorf("method: %q is not an HTTP method", w.Method))
	}
	if err := checkHeader("content type", h.contentType); err != nil {
		return fail(err)
	}
	if strings.TrimSpace(w.URL) == "" {
		return fail(errors.New("url: missing"))
	}
	if h.url, err = parse("url", w.URL); err != nil {
		return fail(err)
	}
	if w.Template != "" {
		if h.body, err = parse("template", w.Template); err != nil {
			return fail(err)
		}
	}
	for k, v := range w.Headers {
		if !validToken(k) {
			return fail(fmt.Errorf("headers: %q is not a header name", k))
		}
		if h.headers[k], err = parse("header "+k, v); err != nil {
			return fail(err)
		}
	}
	return h, nil
}

func parse(field, text string) (*template.Template, error) {
	t, err := template.New(field).Funcs(funcs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return t, nil
}

// validToken reports whether s is an HTTP token (a method, a header
// name).
func validToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	}) < 0
}

// send makes one attempt to deliver ev. Errors of the templates and of
// what they made are permanent: another attempt would make the same.
func (h *webhook) send(ctx context.Context, ev runlog.Event) error {
	req, err := h.request(ctx, ev)
	if err != nil {
		return permanent(err)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text holds the URL, and URLs hold tokens
			return fmt.Errorf("%s: %w", ue.Op, ue.Err)
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}

// request renders ev into the webhook's request.
func (h *webhook) request(ctx context.Context, ev runlog.Event) (*http.Request, error) {
	rawURL, err := render(h.url, ev)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("url: the template did not make an http or https URL")
	}
	var body []byte
	if h.body == nil {
		body, err = json.Marshal(ev)
	} else {
		var s string
		s, err = render(h.body, ev)
		body = []byte(s)
	}
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, h.method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", h.contentType)
	req.Header.Set("User-Agent", "cairn")
	for k, t := range h.headers {
		v, err := render(t, ev)
		if err != nil {
			return nil, err
		}
		if err := checkHeader("header "+k, v); err != nil {
			return nil, fmt.Errorf("%w (use oneline)", err)
		}
		req.Header.Set(k, v)
	}
	return req, nil
}

// render executes t on ev, bounded.
func render(t *template.Template, ev runlog.Event) (string, error) {
	var b limitedBuffer
	b.max = maxRendered
	if err := t.Execute(&b, ev); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	return b.String(), nil
}

// limitedBuffer is a buffer that refuses to grow beyond max bytes.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

var errTooLong = errors.New("output too long")

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, fmt.Errorf("%w (more than %d bytes)", errTooLong, b.max)
	}
	return b.Buffer.Write(p)
}
