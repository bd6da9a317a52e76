package config

import (
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"
)

// Bounds of a notifier.
const (
	maxHeaders    = 64
	maxTemplate   = 64 << 10
	maxRecipients = 100
)

// Events are the events a notifier may name.
var Events = []string{EventStarted, EventSucceeded, EventFailed, EventStale, EventFresh}

// stales checks the [[stale]] tables.
func (v *validator) stales(raws []rawStale) []Stale {
	if len(raws) > MaxStale {
		v.add([]string{fmt.Sprintf("stale.%d", MaxStale)}, "stale", fmt.Sprintf("more than %d groups", MaxStale), nil)
		return nil
	}
	seen := map[string]int{}
	out := make([]Stale, 0, len(raws))
	for i, r := range raws {
		table := fmt.Sprintf("stale.%d", i)
		s := Stale{Namespace: r.Namespace, Group: r.Group, Line: v.lines.line(table)}
		label := "stale " + quote(strings.TrimPrefix(r.Namespace+"/"+r.Group, "/"))
		v.group(table, label, r.Namespace, r.Group)
		if first, dup := seen[r.Namespace+"\x00"+r.Group]; dup {
			v.add(at(table, "group"), label, fmt.Sprintf("watched twice (first on line %d)", first), nil)
		}
		seen[r.Namespace+"\x00"+r.Group] = s.Line
		if r.MaxAge == "" {
			v.add(at(table, "max_age"), label+": max_age", "missing: "+errAge.Error(), nil)
		} else if d, err := parseAge(r.MaxAge); err != nil {
			v.add(at(table, "max_age"), label+": max_age "+quote(r.MaxAge), err.Error(), err)
		} else {
			s.MaxAge = d
		}
		out = append(out, s)
	}
	return out
}

func (v *validator) notify(raw rawNotify) Notify {
	var n Notify
	if len(raw.Webhooks) > MaxWebhooks {
		v.add([]string{fmt.Sprintf("notify.webhook.%d", MaxWebhooks)}, "notify.webhook", fmt.Sprintf("more than %d webhooks", MaxWebhooks), nil)
	} else {
		n.Webhooks = v.webhooks(raw.Webhooks)
	}
	if raw.Mail != nil {
		n.Mail = v.mail(raw.Mail)
	}
	return n
}

func (v *validator) webhooks(raws []rawWebhook) []Webhook {
	names := map[string]int{}
	out := make([]Webhook, 0, len(raws))
	for i, r := range raws {
		table := fmt.Sprintf("notify.webhook.%d", i)
		w := Webhook{Name: r.Name, URL: r.URL, Method: r.Method, ContentType: r.ContentType,
			Headers: r.Headers, Template: r.Template, Line: v.lines.line(table)}
		switch {
		case w.Name != "":
		case len(raws) > 1:
			w.Name = fmt.Sprintf("webhook-%d", i+1)
		default:
			w.Name = "webhook"
		}
		label := "webhook " + quote(w.Name)
		if r.Name != "" && !nameRE.MatchString(r.Name) {
			v.add(at(table, "name"), label+": name", "want letters, digits, \".\", \"_\" and \"-\", at most 64, starting with a letter or digit", nil)
		}
		if first, dup := names[w.Name]; dup {
			v.add(at(table, "name"), label, fmt.Sprintf("name given twice (first on line %d)", first), nil)
		}
		names[w.Name] = w.Line
		v.webhookURL(table, label, r.URL)
		v.webhookHTTP(table, label, &w)
		w.Events = v.events(table, label, r.Events)
		out = append(out, w)
	}
	return out
}

func (v *validator) webhookURL(table, label, raw string) {
	if raw == "" {
		v.add(at(table, "url"), label+": url", "missing: want an http:// or https:// URL", nil)
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !printable(raw):
		v.add(at(table, "url"), label+": url "+quote(raw), "not a URL", err)
	case u.Scheme != "http" && u.Scheme != "https":
		v.add(at(table, "url"), label+": url "+quote(raw), "want an http:// or https:// URL", nil)
	case u.Hostname() == "":
		v.add(at(table, "url"), label+": url "+quote(raw), "no host", nil)
	}
}

// webhookHTTP checks and defaults the request's method and headers:
// nothing that would end a header line (no header injection).
func (v *validator) webhookHTTP(table, label string, w *Webhook) {
	switch w.Method {
	case "":
		w.Method = "POST"
	case "GET", "POST", "PUT", "PATCH":
	default:
		v.add(at(table, "method"), label+": method", fmt.Sprintf("%s: want POST, PUT, PATCH or GET", quote(w.Method)), nil)
	}
	if w.ContentType == "" {
		w.ContentType = "application/json"
	} else if !headerValue(w.ContentType) {
		v.add(at(table, "content_type"), label+": content_type", fmt.Sprintf("%s: control characters in a header", quote(w.ContentType)), nil)
	}
	if len(w.Headers) > maxHeaders {
		v.add(at(table, "headers"), label+": headers", fmt.Sprintf("more than %d", maxHeaders), nil)
	}
	for k, val := range w.Headers {
		if !headerName(k) || !headerValue(val) {
			v.add(at(table, "headers."+k), label+": headers."+keyName([]string{k}),
				"want a header name of letters, digits and \"-\" and a value without control characters", nil)
		}
	}
	if len(w.Template) > maxTemplate {
		v.add(at(table, "template"), label+": template", fmt.Sprintf("longer than %d bytes", maxTemplate), nil)
	}
}

func headerName(s string) bool {
	return s != "" && len(s) <= 256 && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}

func headerValue(s string) bool { return len(s) <= 8192 && printable(s) }

// events checks a notifier's events; none given means DefaultEvents.
func (v *validator) events(table, label string, raw []string) []string {
	if raw == nil {
		return slices.Clone(DefaultEvents)
	}
	if len(raw) == 0 {
		v.add(at(table, "events"), label+": events", "empty: leave it out for "+strings.Join(DefaultEvents, ", "), nil)
	}
	var out []string
	for _, e := range raw {
		switch {
		case !slices.Contains(Events, e):
			v.add(at(table, "events"), label+": events", fmt.Sprintf("unknown event %s: want %s", quote(e), strings.Join(Events, ", ")), nil)
		case slices.Contains(out, e):
			v.add(at(table, "events"), label+": events", fmt.Sprintf("%s given twice", quote(e)), nil)
		default:
			out = append(out, e)
		}
	}
	return out
}

// mail checks the mail notifier: each address one line (a newline would
// start a header of its own), sendmail a program, not an option.
func (v *validator) mail(r *rawMail) *Mail {
	const table = "notify.mail"
	m := &Mail{To: r.To, From: r.From, Sendmail: r.Sendmail, Line: v.lines.line(table)}
	const label = "mail"
	if len(r.To) == 0 {
		v.add(at(table, "to"), label+": to", "missing: want at least one address", nil)
	}
	if len(r.To) > maxRecipients {
		v.add(at(table, "to"), label+": to", fmt.Sprintf("more than %d addresses", maxRecipients), nil)
	}
	for _, a := range r.To {
		v.address(table, "to", a)
	}
	if r.From != "" {
		v.address(table, "from", r.From)
	}
	if m.Sendmail == "" {
		m.Sendmail = DefaultSendmail
	} else if !printable(m.Sendmail) || strings.HasPrefix(m.Sendmail, "-") || strings.ContainsAny(m.Sendmail, " \t") {
		v.add(at(table, "sendmail"), label+": sendmail", fmt.Sprintf("%s: want a program's name or path (no options)", quote(m.Sendmail)), nil)
	}
	m.Events = v.events(table, label, r.Events)
	return m
}

func (v *validator) address(table, key, a string) {
	field := "mail: " + key
	switch {
	case a == "" || strings.TrimSpace(a) == "":
		v.add(at(table, key), field, "empty address", nil)
	case !printable(a) || len(a) > 254:
		v.add(at(table, key), field, fmt.Sprintf("%s: control characters or newlines in an address", quote(a)), nil)
	default:
		if _, err := mail.ParseAddress(a); err != nil || strings.HasPrefix(a, "-") {
			v.add(at(table, key), field, fmt.Sprintf("%s: not a mail address", quote(a)), err)
		}
	}
}
