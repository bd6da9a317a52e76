// Package notify delivers what cairn serve has to tell (runlog.Event:
// a run started, succeeded or failed; a group went stale or is fresh
// again) to webhooks and, through the local sendmail, by mail.
//
//   - options.go: Options, Webhook, Mail, their defaults and Validate
//     (errors name the destination and the field);
//   - dispatch.go: the Dispatcher: Notify never blocks (each
//     destination has a bounded queue that drops its oldest when full,
//     logged); each destination delivers in order in a goroutine of its
//     own, every attempt bounded by a timeout (a webhook's own, else
//     Options.Timeout), failures retried with an
//     exponential backoff (Attempts, Backoff: by default 5 attempts
//     over 10 minutes) and logged through slog; Close drains;
//   - webhook.go: the HTTP request made from templates (URL, headers,
//     body are text/template over the Event), a 2xx answer being
//     success; errors never show the URL (it often holds a token);
//   - mail.go, body.go: an RFC 5322 message (quoted-printable UTF-8
//     text with the run's details and log tail) piped to
//     `sendmail -t -oi`; a line break in any header value is refused.
//
// # Templates
//
// A webhook's URL, header values and body (Template) are Go
// text/template templates over the Event: .Kind (started, succeeded,
// failed, stale, fresh), .Time, .Store, .Host, .Summary, .Run (nil for
// stale and fresh: .Run.Job, .Run.Kind, .Run.Result, .Run.Error,
// .Run.Start, .Run.Bytes, ...) and .Group (nil for runs: .Group.Name,
// .Group.Newest, ...). Besides text/template's functions (urlquery,
// printf, eq with several values...) there are json (a value as JSON: a
// string quoted and escaped) and oneline (control characters and line
// breaks made spaces, for headers and titles). Without Template the
// body is the Event as JSON. Events default to failed, stale and
// fresh.
//
// ntfy (a plain text body, the title and priority in headers):
//
//	URL:         https://ntfy.sh/my-cairn-alerts
//	ContentType: text/plain; charset=utf-8
//	Headers:     Title: cairn {{.Kind}} on {{oneline .Host}}
//	             Priority: {{if eq .Kind "failed" "stale"}}high{{else}}default{{end}}
//	             Tags: {{if eq .Kind "failed" "stale"}}warning{{else}}white_check_mark{{end}}
//	Template:    {{.Summary}}{{with .Run}}{{if .Error}}
//	             {{.Error}}{{end}}{{end}}
//
// Gotify (JSON {title, message, priority}; the application token in a
// header or as ?token= in the URL):
//
//	URL:      https://gotify.example.org/message
//	Headers:  X-Gotify-Key: AbCdEf123456
//	Template: {"title": {{json (printf "cairn %s: %s" .Kind .Store)}},
//	           "message": {{json .Summary}},
//	           "priority": {{if eq .Kind "failed" "stale"}}8{{else}}4{{end}}}
//
// Slack, Mattermost, Rocket.Chat, Discord's /slack endpoint
// (incoming webhooks taking {"text": ...}):
//
//	URL:      https://hooks.slack.com/services/T000/B000/XXXX
//	Template: {"text": {{json (printf "%s (%s)" .Summary .Host)}}}
//
// healthchecks.io and its kind (one ping URL a check, with /start
// before a run, nothing after a good one and /fail after a failure):
//
//	URL:      https://hc-ping.com/UUID{{if eq .Kind "failed"}}/fail{{else if eq .Kind "started"}}/start{{end}}
//	Template: {{.Summary}}{{with .Run}}{{range .LogTail}}
//	          {{.}}{{end}}{{end}}
//	Events:   started, succeeded, failed
//
// With healthchecks' slug URLs one webhook serves a check per job:
// https://hc-ping.com/PING_KEY/cairn-{{with .Run}}{{urlquery .Job}}{{end}}{{if eq .Kind "failed"}}/fail{{else if eq .Kind "started"}}/start{{end}}
// (Events started, succeeded, failed: a stale event has no run).
package notify
