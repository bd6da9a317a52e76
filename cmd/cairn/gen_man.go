package main

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

// manDate is the date of SOURCE_DATE_EPOCH (reproducible builds), zero
// when unset: the pages then carry today's.
func manDate() (time.Time, error) {
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

// genCmd holds the generators of files made from the command tree.
func (a *app) genCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "generate files from the commands: man pages",
		Long: `Generates files from the command tree and the manual's text, so that
they say what the commands do: the man pages.`,
	}
	cmd.AddCommand(a.genManCmd())
	return cmd
}

func (a *app) genManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "write a man page (section 1) for every command into DIR",
		Long: `Writes cairn.1 and one page a command (cairn-backup.1, cairn-tape-export.1,
…) into DIR, creating it. cairn.1 has the description, options, examples,
exit status, environment and files; a command's page its description,
options, examples and exit status. The pages are dated
$SOURCE_DATE_EPOCH when set, else today. 'make install' installs them
under PREFIX/share/man/man1.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := manDate()
			if err != nil {
				return usageErr("SOURCE_DATE_EPOCH: %v", err)
			}
			if t.IsZero() {
				t = time.Now()
			}
			n, err := writeManPages(cmd.Root(), args[0], manHeader{date: t, source: "cairn " + buildVersion().Version})
			if err != nil {
				return err
			}
			if !a.quiet {
				fmt.Fprintf(a.stderr, "wrote %d man pages to %s\n", n, args[0])
			}
			return nil
		},
	}
}

// manHeader is what every page's .TH line carries besides its title.
type manHeader struct {
	date   time.Time
	source string
}

// writeManPages writes a page for root and every command below it that
// is not hidden into dir, and returns how many.
func writeManPages(root *cobra.Command, dir string, hdr manHeader) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("gen man: %w", err)
	}
	n := 0
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		path := filepath.Join(dir, manName(c)+".1")
		if err := os.WriteFile(path, []byte(manPage(c, hdr)), 0o644); err != nil {
			return fmt.Errorf("gen man: %w", err)
		}
		n++
		for _, sub := range manChildren(c) {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return n, walk(root)
}

// manName is a command's page name: cairn-tape-export.
func manName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// manChildren are the commands of c that have pages (not help, not hidden).
func manChildren(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			out = append(out, sub)
		}
	}
	return out
}

// manPage renders c's page. cairn(1) has every section; a command's page
// points to it for the environment and the files.
func manPage(c *cobra.Command, hdr manHeader) string {
	var r roff
	r.req("TH", strings.ToUpper(manName(c)), "1", hdr.date.UTC().Format("2006-01-02"), hdr.source, "cairn manual")
	r.req("nh")
	r.req("ad", "l")
	r.section("NAME")
	r.line(roffEscape(manName(c) + " - " + strings.TrimPrefix(c.Short, c.Name()+": ")))
	r.section("SYNOPSIS")
	use := strings.TrimSpace(strings.TrimPrefix(c.UseLine(), c.CommandPath()))
	if c.HasAvailableSubCommands() { // a group: its RunE only says what is missing
		use = "COMMAND [flags]"
	}
	r.line(`\fB` + roffEscape(c.CommandPath()) + `\fR ` + roffEscape(use))
	r.section("DESCRIPTION")
	r.text(cmp.Or(c.Long, c.Short))
	if subs := manChildren(c); len(subs) > 0 {
		r.section("COMMANDS")
		for _, sub := range subs {
			r.tagged(sub.CommandPath(), sub.Short)
		}
	}
	manOptions(&r, "OPTIONS", c.NonInheritedFlags())
	manOptions(&r, "GLOBAL OPTIONS", c.InheritedFlags())
	manExamples(&r, examples[c.CommandPath()])
	manTable(&r, "EXIT STATUS", exitStatuses)
	if !c.HasParent() {
		manTable(&r, "ENVIRONMENT", environment)
		manTable(&r, "FILES", files)
	} else {
		var names []string
		for _, e := range environment {
			names = append(names, e.term)
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
func manExamples(r *roff, ex []example) {
	if len(ex) == 0 {
		return
	}
	r.section("EXAMPLES")
	for _, e := range ex {
		r.para(e.what + ":")
		r.pre(strings.Split(e.sh, "\n"))
	}
}

// manTable writes a table of the manual (manual.go) as tagged paragraphs.
func manTable(r *roff, title string, rows []manEntry) {
	r.section(title)
	for _, e := range rows {
		r.tagged(e.term, e.text)
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
	refs = append(refs, manChildren(c)...)
	if len(refs) == 0 {
		return
	}
	r.section("SEE ALSO")
	var names []string
	for _, p := range refs {
		names = append(names, `\fB`+roffEscape(manName(p))+`\fR(1)`)
	}
	r.line(strings.Join(names, ", "))
}
