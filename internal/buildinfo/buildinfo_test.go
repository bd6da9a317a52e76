package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	var v Info
	fill(&v, bi, false)
	if v.Version != "v1.2.3" || v.Commit != "abc" || v.CommitTime != "2026-01-02T03:04:05Z" || !v.Dirty {
		t.Errorf("from build info: %+v", v)
	}
	// -X values win.
	v = Info{Version: "v9", Commit: "x", Dirty: false}
	fill(&v, bi, true)
	if v.Version != "v9" || v.Commit != "x" || v.Dirty {
		t.Errorf("-X values overridden: %+v", v)
	}
	v = Info{GoVersion: "go1", Platform: "linux/amd64"}
	fill(&v, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, false)
	if v.Version != "" || !strings.Contains(v.String(), "commit unknown") {
		t.Errorf("devel build: %+v %s", v, v)
	}
}
