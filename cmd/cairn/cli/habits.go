package cli

import (
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// Habits from restic, borg and proxmox-backup-client: a command name or
// flag cairn does not have, with the cairn command that does the same.
// An unknown command or flag is still bad usage (exit 2); the hint is the
// one line that replaces "see --help".

// commandHabits maps a command path below "cairn" that cairn does not
// have to what to run instead.
var commandHabits = map[string]string{
	"check":           "cairn verify",                // restic, borg
	"stats":           "cairn du",                    // restic
	"copy":            "cairn sync --from STORE",     // restic
	"create":          "cairn backup",                // borg
	"extract":         "cairn restore",               // borg
	"export-tar":      "cairn dump",                  // borg
	"list":            "cairn snapshots",             // borg, proxmox-backup-client, restic
	"info":            "cairn du",                    // borg
	"status":          "cairn du",                    // proxmox-backup-client
	"compact":         "cairn gc",                    // borg
	"garbage-collect": "cairn gc",                    // proxmox-backup-client
	"delete":          "cairn forget",                // borg
	"catalog":         "cairn ls",                    // proxmox-backup-client
	"files":           "cairn ls SNAPSHOT",           // proxmox-backup-client snapshot files
	"snapshot":        "cairn snapshots",             // proxmox-backup-client snapshot list
	"map":             "cairn mount",                 // proxmox-backup-client: images show as files
	"benchmark":       "cairn bench chunker",         // borg, proxmox-backup-client
	"key passwd":      "cairn key change-passphrase", // restic
	"key add":         "cairn key create",            // restic
	"key list":        "cairn key show FILE",         // restic
	"key export":      "cairn key paperkey",          // borg key export --paper
}

// flagHabits maps "COMMAND --FLAG" (or "* --FLAG": any command) that
// cairn does not have to what to give instead.
var flagHabits = map[string]string{
	"forget --keep-last":    "cairn prune --keep-last",
	"forget --keep-hourly":  "cairn prune --keep-hourly",
	"forget --keep-daily":   "cairn prune --keep-daily",
	"forget --keep-weekly":  "cairn prune --keep-weekly",
	"forget --keep-monthly": "cairn prune --keep-monthly",
	"forget --keep-yearly":  "cairn prune --keep-yearly",
	"forget --prune":        "cairn prune --keep-… GROUP (then cairn gc frees the chunks)",
	"prune --keep-within":   "cairn prune --keep-hourly/--keep-daily (cairn has PBS's rules only)",
	"backup --host":         "cairn backup --id HOSTNAME (the default for --type host)",
	"backup --backup-id":    "cairn backup --id",
	"backup --backup-type":  "cairn backup --type",
	"backup --backup-time":  "cairn backup --time",
	"backup --stats":        "cairn backup (it prints its summary; --json for keys)",
	"snapshots --host":      "cairn snapshots host/HOSTNAME",
	"restore --target":      "cairn restore SNAPSHOT ARCHIVE TARGET",
	"ls --long":             "cairn ls -l",
	"ls --recursive":        "cairn ls -R",
	"verify --read-data":    "cairn verify (it always reads every chunk)",
	"* --repo":              "--store DIR (or CAIRN_STORE=DIR)",
	"* --repository":        "--store DIR (or CAIRN_STORE=DIR)",
}

var unknownFlagRE = regexp.MustCompile(`unknown flag: (--[^\s=]+)`)

// habitHint is the hint for an unknown command or flag that is a habit
// of another backup tool, or "".
func (a *app) habitHint(cmd *cobra.Command, err error) string {
	if cmd == nil {
		return ""
	}
	path := strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), "cairn"), " ")
	if m := unknownFlagRE.FindStringSubmatch(err.Error()); m != nil {
		for _, k := range []string{path + " " + m[1], "* " + m[1]} {
			if h, ok := flagHabits[k]; ok {
				return didYouMean(h)
			}
		}
	}
	if !cmd.HasSubCommands() {
		return ""
	}
	words := positional(a.args)
	depth := len(strings.Fields(path))
	if len(words) <= depth {
		return ""
	}
	name := strings.TrimPrefix(path+" "+words[depth], " ")
	if h, ok := commandHabits[name]; ok {
		return didYouMean(h)
	}
	return ""
}

// didYouMean quotes the command of a habit's hint, "COMMAND (NOTE)".
func didYouMean(h string) string {
	use, note, ok := strings.Cut(h, " (")
	if ok {
		return "did you mean `" + use + "`? (" + note
	}
	return "did you mean `" + use + "`?"
}

// globalValueFlags are the root's flags that take a separate value.
var globalValueFlags = map[string]bool{"--store": true, "--log-format": true}

// positional is args without flags and the global flags' values: the
// command words first.
func positional(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--":
			return append(out, args[i+1:]...)
		case globalValueFlags[arg]:
			i++
		case strings.HasPrefix(arg, "-"):
		default:
			out = append(out, arg)
		}
	}
	return out
}
