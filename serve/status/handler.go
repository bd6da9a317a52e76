package status

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"

	"github.com/cairnfs/cairn/serve/runlog"
)

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

// Handler serves the status page of the status that status returns at
// each request: "/" the HTML page, "/status.json" the status as JSON.
// It answers GET and HEAD only (405 otherwise): nothing is started over
// HTTP.
func Handler(status func() runlog.Status) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: the status page is read-only", http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path {
		case "/", "":
			servePage(w, status())
		case "/status.json":
			serveJSON(w, status())
		default:
			http.NotFound(w, r)
		}
	})
}

// security are the headers of every answer: nothing but the page's own
// inline style may load or run.
func security(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
}

// servePage renders the page whole before answering, so that an error
// is an error page and not half of one.
func servePage(w http.ResponseWriter, st runlog.Status) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, newView(st)); err != nil {
		http.Error(w, "status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	security(w, "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

func serveJSON(w http.ResponseWriter, st runlog.Status) {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		http.Error(w, "status: "+err.Error(), http.StatusInternalServerError)
		return
	}
	security(w, "application/json")
	_, _ = w.Write(append(data, '\n'))
}
