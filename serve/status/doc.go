// Package status is cairn serve's status page: one server-rendered HTML
// page (html/template, everything from the store escaped; no script, no
// external asset, inline CSS; readable on a phone; it reloads itself
// every minute) and the status as JSON. Read-only: GET and HEAD only,
// nothing is started over HTTP.
//
//   - handler.go: Handler ("/" the page, "/status.json" the
//     runlog.Status), the methods allowed, the headers of every answer
//     (a content security policy that lets nothing load or run);
//   - page.go: what the page shows, made from a runlog.Status: the
//     store's figures and the daemon's uptime, the groups (stale ones
//     first, marked STALE with the class "stale"), a row per job (its
//     newest run's result, start, duration and first error, failed ones
//     marked FAILED with the class "failed", and its next due time) and
//     the recent runs;
//   - chart.go: the store's size (an area, left axis) and deduplication
//     (a line, right axis) over time as inline SVG, drawn server-side
//     from Status.Series: any number of samples (none: a note; one:
//     dots; many: at most 1000 points), any values (negative, huge,
//     equal or unordered times) drawn within the frame;
//   - page.html: the page's template and style.
package status
