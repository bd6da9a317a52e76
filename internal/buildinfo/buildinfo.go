package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what `cairn version` prints, and its --json.
type Info struct {
	Version    string `json:"version"`
	GoVersion  string `json:"go_version"`
	Platform   string `json:"platform"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Dirty      bool   `json:"dirty"`
}

// Read puts together the values set at build time with -ldflags -X
// (empty when not set; dirty "true" or "false") and the build
// information Go records: the module version and the vcs.* settings.
func Read(version, commit, commitTime, dirty string) Info {
	v := Info{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Commit: commit, CommitTime: commitTime, Dirty: dirty == "true"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fill(&v, bi, dirty != "")
	}
	if v.Version == "" {
		v.Version = "devel"
	}
	return v
}

// fill fills what -X left empty from bi. dirtySet: -X gave
// the dirty flag, which then wins over vcs.modified.
func fill(v *Info, bi *debug.BuildInfo, dirtySet bool) {
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
func (v Info) String() string {
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
