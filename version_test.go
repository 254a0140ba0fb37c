package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"
)

// TestVersionOf: a build's version from what it recorded of itself.
func TestVersionOf(t *testing.T) {
	vcs := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/pinprobe/pinprobe", Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const rev = "2f4b0be3736a0c5d9e8f7a6b5c4d3e2f1a0b9c8d"
	for _, tt := range []struct {
		name, named string
		bi          *debug.BuildInfo
		want        string
	}{
		{"named at link time", "0.1.0+img", vcs("(devel)", "vcs.revision", rev), "0.1.0+img"},
		{"no build information", "", nil, release + "-dev"},
		{"go run, -buildvcs=false", "", vcs("(devel)"), release + "-dev"},
		{"a released module", "", vcs("v0.2.0"), "0.2.0"},
		{"a release candidate", "", vcs("v0.2.0-rc.1"), "0.2.0-rc.1"},
		{"a commit", "", vcs("v0.0.0-20261205150639-2f4b0be3736a", "vcs.revision", rev, "vcs.modified", "false"), release + "-dev+2f4b0be3736a"},
		{"a changed tree", "", vcs("v0.0.0-20261205150639-2f4b0be3736a+dirty", "vcs.revision", rev, "vcs.modified", "true"), release + "-dev+2f4b0be3736a.dirty"},
		{"a commit after a tag", "", vcs("v0.1.1-0.20261205150639-2f4b0be3736a", "vcs.revision", rev), release + "-dev+2f4b0be3736a"},
	} {
		if got := versionOf(tt.named, tt.bi); got != tt.want {
			t.Errorf("%s: version %q; want %q", tt.name, got, tt.want)
		}
	}
	bi := vcs("(devel)", "vcs.time", "2026-12-05T14:51:08Z")
	bi.GoVersion = "go1.26.8"
	if got := builtOf(bi); got != "(commit 2026-12-05T14:51:08Z, go1.26.8)" {
		t.Errorf("builtOf = %q", got)
	}
}

// TestVersionOfABuild builds pinprobe from this checkout with VCS
// stamping on: --version names the commit (and a changed tree), and the
// JSON report of a run says the same version.
func TestVersionOfABuild(t *testing.T) {
	check.Long(t, "a build of pinprobe")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "pinprobe")
	if out, err := exec.Command(goTool, "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "pinprobe " + release + "-dev+" + string(head[:12])
	if line := string(out); !strings.HasPrefix(line, want) || !strings.Contains(line, "(commit ") {
		t.Errorf("--version of a build of %s: %q; want %q[.dirty] (commit …, go…)", head[:12], line, want)
	}
	built := strings.Fields(string(out))[1]

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	saved := filepath.Join(t.TempDir(), "run.json")
	cmd := exec.Command(bin, "-n", "2", "--no-preflight", "-q", "-o", saved, srv.URL+"/")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a run: %v\n%s", err, out)
	}
	data, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Version != built {
		t.Errorf("the report's version %q (%v); want %q, as --version says", doc.Version, err, built)
	}
}
