package config

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// The file as decoded, before checks and defaults. Pointers tell a key
// left out from one given empty or false.
type rawConfig struct {
	Store  string     `toml:"store"`
	State  string     `toml:"state"`
	HTTP   rawHTTP    `toml:"http"`
	Mount  rawMount   `toml:"mount"`
	Jobs   []rawJob   `toml:"job"`
	Stale  []rawStale `toml:"stale"`
	Notify rawNotify  `toml:"notify"`
}

type rawHTTP struct {
	Listen      *string `toml:"listen"`
	MetricsFile string  `toml:"metrics_file"`
}

type rawMount struct {
	Dir string `toml:"dir"`
}

type rawJob struct {
	Name      string         `toml:"name"`
	Kind      string         `toml:"kind"`
	Schedule  *string        `toml:"schedule"`
	Params    map[string]any `toml:"params"`
	Namespace string         `toml:"namespace"`
	Group     string         `toml:"group"`
	Sources   []string       `toml:"sources"`
	CatchUp   *bool          `toml:"catch_up"`
}

type rawStale struct {
	Namespace string `toml:"namespace"`
	Group     string `toml:"group"`
	MaxAge    string `toml:"max_age"`
}

type rawNotify struct {
	Webhooks []rawWebhook `toml:"webhook"`
	Mail     *rawMail     `toml:"mail"`
}

type rawWebhook struct {
	Name        string            `toml:"name"`
	URL         string            `toml:"url"`
	Method      string            `toml:"method"`
	ContentType string            `toml:"content_type"`
	Headers     map[string]string `toml:"headers"`
	Template    string            `toml:"template"`
	Events      []string          `toml:"events"`
}

type rawMail struct {
	To       []string `toml:"to"`
	From     string   `toml:"from"`
	Sendmail string   `toml:"sendmail"`
	Events   []string `toml:"events"`
}

// knownKeys are each table's keys, for the message about an unknown one.
var knownKeys = map[string]string{
	"":               "store, state, http, mount, job, stale, notify",
	"http":           "listen, metrics_file",
	"mount":          "dir",
	"job":            "name, kind, schedule, params, namespace, group, sources, catch_up",
	"stale":          "namespace, group, max_age",
	"notify":         "webhook, mail",
	"notify.webhook": "name, url, method, content_type, headers, template, events",
	"notify.mail":    "to, from, sendmail, events",
}

// decode decodes the file strictly: a key no table has, or a value of
// the wrong type, is an error with its line.
func decode(path string, data []byte) (*rawConfig, error) {
	d := toml.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var raw rawConfig
	err := d.Decode(&raw)
	if err == nil {
		return &raw, nil
	}
	var missing *toml.StrictMissingError
	if errors.As(err, &missing) {
		var errs []error
		for i := range missing.Errors {
			if i == maxErrors {
				break
			}
			de := &missing.Errors[i]
			line, _ := de.Position()
			key := []string(de.Key())
			msg := "unknown key"
			if known, ok := knownKeys[strings.Join(key[:len(key)-1], ".")]; ok {
				msg += " (known: " + known + ")"
			}
			errs = append(errs, &Error{Path: path, Line: line, Field: keyName(key), Msg: msg})
		}
		return nil, errors.Join(errs...)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		return nil, &Error{Path: path, Line: line, Field: keyName(de.Key()), Msg: decodeMessage(de.Error())}
	}
	return nil, &Error{Path: path, Msg: clean(err.Error())}
}

var typeErrorRE = regexp.MustCompile(`cannot decode TOML (\S+) into .* of type (\S+)$`)

// typeWords say what a field's Go type wants, as a TOML value.
var typeWords = map[string]string{
	"string":                 "a string",
	"*string":                "a string",
	"bool":                   "true or false",
	"*bool":                  "true or false",
	"[]string":               "a list of strings",
	"map[string]string":      "a table of strings",
	"map[string]interface{}": "a table",
	"*config.rawMail":        "a table",
}

// decodeMessage rewrites the decoder's message in the file's terms.
func decodeMessage(msg string) string {
	msg = strings.TrimPrefix(msg, "toml: ")
	if m := typeErrorRE.FindStringSubmatch(msg); m != nil {
		want, ok := typeWords[m[2]]
		switch {
		case ok:
		case strings.HasPrefix(m[2], "[]config."):
			want = "tables ([[…]])"
		case strings.HasPrefix(m[2], "config."):
			want = "a table"
		default:
			want = m[2]
		}
		return fmt.Sprintf("want %s, not %s %s", want, article(m[1]), m[1])
	}
	return clean(msg)
}

func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an"
	}
	return "a"
}
