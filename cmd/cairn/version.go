package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Set at build time (see the Makefile):
//
//	go build -ldflags "-X main.version=1.2.0 -X main.commit=abc123 -X main.commitTime=2026-12-01T10:00:00Z -X main.dirty=true"
//
// Left empty, they come from debug.ReadBuildInfo: the module version
// (go install …@v1.2.0) and the vcs.* settings go build records in a
// git checkout (not with -buildvcs=false).
var version, commit, commitTime, dirty string

// versionInfo is what `cairn version` prints, and its --json.
type versionInfo struct {
	Version    string `json:"version"`
	GoVersion  string `json:"go_version"`
	Platform   string `json:"platform"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Dirty      bool   `json:"dirty"`
}

// buildVersion puts together the -X values and the build information.
func buildVersion() versionInfo {
	v := versionInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Commit: commit, CommitTime: commitTime, Dirty: dirty == "true"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fillFromBuildInfo(&v, bi, dirty != "")
	}
	if v.Version == "" {
		v.Version = "devel"
	}
	return v
}

// fillFromBuildInfo fills what -X left empty from bi. dirtySet: -X gave
// the dirty flag, which then wins over vcs.modified.
func fillFromBuildInfo(v *versionInfo, bi *debug.BuildInfo, dirtySet bool) {
	if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if v.Commit == "" {
				v.Commit = s.Value
			}
		case "vcs.time":
			if v.CommitTime == "" {
				v.CommitTime = s.Value
			}
		case "vcs.modified":
			if !dirtySet {
				v.Dirty = s.Value == "true"
			}
		}
	}
}

// String is the one line of --version.
func (v versionInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %s", v.Version, v.GoVersion, v.Platform)
	if v.Commit != "" {
		fmt.Fprintf(&b, ", commit %s", v.Commit)
		if v.Dirty {
			b.WriteString("-dirty")
		}
		if v.CommitTime != "" {
			fmt.Fprintf(&b, " of %s", v.CommitTime)
		}
	} else {
		b.WriteString(", commit unknown")
	}
	b.WriteString(")")
	return b.String()
}

func (a *app) versionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the version, the Go version and the commit cairn was built from",
		Long: `Prints the version, the Go version, the platform and the commit cairn
was built from (with -dirty when the tree had changes, and the commit's
time). They are set with -ldflags -X, as the Makefile does; without them
cairn takes them from the build information Go records. cairn --version
prints the same line.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := buildVersion()
			if asJSON {
				return printJSON(a, v)
			}
			_, err := fmt.Fprintf(a.stdout, "cairn %s\n", v)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
