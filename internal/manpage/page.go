package manpage

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// SourceDate is the date of SOURCE_DATE_EPOCH (reproducible builds),
// zero when unset: the pages then carry today's.
func SourceDate() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("%q: want seconds since 1970", v)
	}
	return time.Unix(n, 0).UTC(), nil
}

// Entry is one row of a manual table: a term and what it means. Text may
// hold `code spans` in backquotes, bold in a page.
type Entry struct{ Term, Text string }

// Example is one use of a command: what it does and the shell lines.
type Example struct{ What, Sh string }

// Manual is what the pages carry besides the command tree: the date and
// source of every page's .TH line, each command's examples by command
// path, and the tables of cairn(1) (the exit status is on every page).
type Manual struct {
	Date                           time.Time
	Source                         string
	Examples                       map[string][]Example
	ExitStatus, Environment, Files []Entry
}

// Write writes a page for root and every command below it that
// is not hidden into dir, and returns how many.
func Write(root *cobra.Command, dir string, m Manual) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("gen man: %w", err)
	}
	n := 0
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		path := filepath.Join(dir, Name(c)+".1")
		if err := os.WriteFile(path, []byte(Page(c, m)), 0o644); err != nil {
			return fmt.Errorf("gen man: %w", err)
		}
		n++
		for _, sub := range Children(c) {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return n, walk(root)
}

// Name is a command's page name: cairn-tape-export.
func Name(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// Children are the commands of c that have pages (not help, not hidden).
func Children(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			out = append(out, sub)
		}
	}
	return out
}

// Page renders c's page. cairn(1) has every section; a command's page
// points to it for the environment and the files.
func Page(c *cobra.Command, m Manual) string {
	var r roff
	r.req("TH", strings.ToUpper(Name(c)), "1", m.Date.UTC().Format("2006-01-02"), m.Source, "cairn manual")
	r.req("nh")
	r.req("ad", "l")
	r.section("NAME")
	r.line(roffEscape(Name(c) + " - " + strings.TrimPrefix(c.Short, c.Name()+": ")))
	r.section("SYNOPSIS")
	use := strings.TrimSpace(strings.TrimPrefix(c.UseLine(), c.CommandPath()))
	if c.HasAvailableSubCommands() { // a group: its RunE only says what is missing
		use = "COMMAND [flags]"
	}
	r.line(`\fB` + roffEscape(c.CommandPath()) + `\fR ` + roffEscape(use))
	r.section("DESCRIPTION")
	r.text(cmp.Or(c.Long, c.Short))
	if subs := Children(c); len(subs) > 0 {
		r.section("COMMANDS")
		for _, sub := range subs {
			r.tagged(sub.CommandPath(), sub.Short)
		}
	}
	manOptions(&r, "OPTIONS", c.NonInheritedFlags())
	manOptions(&r, "GLOBAL OPTIONS", c.InheritedFlags())
	manExamples(&r, m.Examples[c.CommandPath()])
	manTable(&r, "EXIT STATUS", m.ExitStatus)
	if !c.HasParent() {
		manTable(&r, "ENVIRONMENT", m.Environment)
		manTable(&r, "FILES", m.Files)
	} else {
		var names []string
		for _, e := range m.Environment {
			names = append(names, e.Term)
		}
		r.section("ENVIRONMENT")
		r.filled("cairn(1) describes the variables cairn reads: " + strings.Join(names, ", ") +
			"; and the files of a store, a mount and a tape drive.")
	}
	manSeeAlso(&r, c)
	return r.String()
}

// manOptions lists flags (none hidden or deprecated) under title.
func manOptions(r *roff, title string, flags *pflag.FlagSet) {
	if !flags.HasAvailableFlags() {
		return
	}
	r.section(title)
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		tag := `\fB\-\-` + roffEscape(f.Name) + `\fR`
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			tag = `\fB\-` + roffEscape(f.Shorthand) + `\fR, ` + tag
		}
		if name == "stringArray" || name == "stringSlice" {
			name = "string" // repeatable, as the usage says
		}
		if name != "" && f.NoOptDefVal == "" {
			tag += ` \fI` + roffEscape(name) + `\fR`
		}
		switch f.DefValue {
		case "", "false", "0", "[]", "0s":
		default:
			usage += " (default " + f.DefValue + ")"
		}
		r.req("TP")
		r.line(tag)
		r.filled(strings.ReplaceAll(usage, "`", "'"))
	})
}

// manExamples writes each example's text and its lines.
func manExamples(r *roff, ex []Example) {
	if len(ex) == 0 {
		return
	}
	r.section("EXAMPLES")
	for _, e := range ex {
		r.para(e.What + ":")
		r.pre(strings.Split(e.Sh, "\n"))
	}
}

// manTable writes a table of the manual as tagged paragraphs.
func manTable(r *roff, title string, rows []Entry) {
	r.section(title)
	for _, e := range rows {
		r.tagged(e.Term, e.Text)
	}
}

// manSeeAlso names the pages of c's parent, its commands and cairn(1).
func manSeeAlso(r *roff, c *cobra.Command) {
	var refs []*cobra.Command
	if c.HasParent() {
		refs = append(refs, c.Parent())
		if c.Parent().HasParent() {
			refs = append([]*cobra.Command{c.Root()}, refs...)
		}
	}
	refs = append(refs, Children(c)...)
	if len(refs) == 0 {
		return
	}
	r.section("SEE ALSO")
	var names []string
	for _, p := range refs {
		names = append(names, `\fB`+roffEscape(Name(p))+`\fR(1)`)
	}
	r.line(strings.Join(names, ", "))
}
