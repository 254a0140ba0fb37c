package main

// The README is the contract: what it quotes of pinprobe is pinprobe's.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pinprobe/internal/fixture"
)

const readme = "README.md"

// readmeBlock returns what README.md holds between <!-- GEN:name --> and
// <!-- /GEN:name -->, and a function that writes the README with body
// there instead (for -update).
func readmeBlock(t *testing.T, name string) (body string, replace func(body string)) {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	open, end := []byte("<!-- GEN:"+name+" -->\n"), []byte("<!-- /GEN:"+name+" -->")
	i, j := bytes.Index(data, open), bytes.Index(data, end)
	if i < 0 || j < i || bytes.Count(data, open) != 1 {
		t.Fatalf("%s: no single %s … %s block", readme, strings.TrimSpace(string(open)), end)
	}
	i += len(open)
	return string(data[i:j]), func(body string) {
		out := append(append(append([]byte{}, data[:i]...), body...), data[j:]...)
		if err := os.WriteFile(readme, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadmeHelp: the README's GEN:help block is `pinprobe --help`
// verbatim (go test -run TestReadmeHelp -update rewrites it).
func TestReadmeHelp(t *testing.T) {
	code, help, stderr := pinprobe(t, "--help")
	if code != exitOK {
		t.Fatalf("--help: exit %d\n%s", code, stderr)
	}
	want := "```text\n" + help + "```\n"
	got, replace := readmeBlock(t, "help")
	if *fixture.Update {
		replace(want)
		return
	}
	if got != want {
		t.Errorf("%s: the GEN:help block is not pinprobe --help (go test -run TestReadmeHelp -update rewrites it)", readme)
	}
}

// publishedModule is the module path pinprobe is to be published under:
// the one `go install …@latest` lines name.
const publishedModule = "github.com/pinprobe/pinprobe"

// goModLine returns the value of go.mod's line that starts with key ("module", "go").
func goModLine(t *testing.T, key string) string {
	t.Helper()
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, key+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("go.mod has no %s line", key)
	return ""
}

// TestReadmeSetUp: the README's set-up is true. The Go it asks for is
// go.mod's, said before the first command; the full --help comes after the
// examples, not before them.
func TestReadmeSetUp(t *testing.T) {
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	goVersion := goModLine(t, "go")
	want := "Go " + goVersion + " or later"
	for _, m := range regexp.MustCompile(`Go 1\.[0-9.]*[0-9] or later`).FindAllString(doc, -1) {
		if m != want {
			t.Errorf("%s says %q; go.mod says go %s", readme, m, goVersion)
		}
	}
	req, firstCmd := strings.Index(doc, want), strings.Index(doc, "```sh\n")
	if req < 0 || firstCmd < 0 || req > firstCmd {
		t.Errorf("%s: %q at byte %d; want it before the first command block (byte %d)", readme, want, req, firstCmd)
	}
	examples, help := strings.Index(doc, "\n## Examples\n"), strings.Index(doc, "<!-- GEN:help -->")
	if examples < 0 || help < examples {
		t.Fatalf("%s: the --help block (byte %d) comes before ## Examples (byte %d)", readme, help, examples)
	}
	if end := strings.Index(doc[examples:], "\n```\n"); examples+end > help {
		t.Errorf("%s: the --help block comes before the end of the first examples", readme)
	}
}

// TestInstallLines: every `go install` the README and the examples give
// works — `go install .` in a checkout (run here into a temporary GOBIN),
// or the published module path at a version — and the Go the CI example
// sets up is go.mod's or later.
func TestInstallLines(t *testing.T) {
	files := []string{readme}
	for _, pat := range []string{"examples/*/*.yml", "examples/*.sh", "examples/*/*.sh"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	install := regexp.MustCompile("\\bgo install +([^\\s`'\")]+)")
	fromCheckout, published := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range install.FindAllStringSubmatch(string(data), -1) {
			switch mod, version, ok := strings.Cut(m[1], "@"); {
			case m[1] == ".":
				fromCheckout++
			case ok && mod == publishedModule && version != "":
				published++
			default:
				t.Errorf("%s: %q installs neither from a checkout (go install .) nor %s@VERSION", f, m[0], publishedModule)
			}
		}
	}
	if fromCheckout == 0 || published == 0 {
		t.Errorf("%d lines install from a checkout and %d the published module; want both", fromCheckout, published)
	}
	// What `go install` can fetch has a dot in its first element and names
	// the binary after its last, the pinprobe the examples call; once go.mod
	// carries a published path, it is this one.
	if first, _, _ := strings.Cut(publishedModule, "/"); !strings.Contains(first, ".") || filepath.Base(publishedModule) != "pinprobe" {
		t.Errorf("%s: go install cannot fetch it as the pinprobe binary", publishedModule)
	}
	if mod := goModLine(t, "module"); strings.Contains(mod, ".") && mod != publishedModule {
		t.Errorf("go.mod's module %s; the README and examples install %s", mod, publishedModule)
	}

	ci, err := os.ReadFile("examples/ci/pinprobe-gate.yml")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := goModLine(t, "go")
	got := ""
	if m := regexp.MustCompile(`go-version: "([^"]+)"`).FindSubmatch(ci); m != nil {
		got = string(m[1])
	}
	if got != ">="+goVersion && got != goVersion {
		t.Errorf("examples/ci/pinprobe-gate.yml sets up Go %q; want \">=%s\", go.mod's", got, goVersion)
	}

	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	cmd := exec.Command(goTool, "install", ".")
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install .: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "pinprobe"), "version").Output()
	if err != nil || string(out) != "pinprobe "+version+"\n" {
		t.Errorf("go install . then pinprobe version: %q, %v; want %q", out, err, "pinprobe "+version+"\n")
	}
}
