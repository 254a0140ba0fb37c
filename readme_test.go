package main

// The README is a guide; the reference is in docs/. The generated blocks of
// both, between <!-- GEN:name --> and <!-- /GEN:name -->, are what pinprobe
// prints. Those this test knows are made here (go test . -run
// TestReadmeGenerated -update rewrites them); the others (schemas, perf)
// are written by hand.

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/docfix"
)

// readmeBlocks makes each generated block the test knows: --help, and the
// demo's text report, its brief text report and the start of its Markdown
// report, rendered from its saved report (examples/demo-report.json), so
// they say what the examples say, and the same on every run; and the top
// of the report, up to its first blank line, that the README's examples
// show: the demo's, and the demo's under a release gate (exit 1).
func readmeBlocks(t *testing.T) map[string]string {
	t.Helper()
	exits := func(want int, args ...string) string {
		t.Helper()
		code, stdout, stderr := pinprobe(t, args...)
		if code != want {
			t.Fatalf("pinprobe %s: exit %d, want %d: %s", strings.Join(args, " "), code, want, stderr)
		}
		return stdout
	}
	out := func(args ...string) string {
		t.Helper()
		return exits(exitOK, args...)
	}
	top := func(report string) string {
		t.Helper()
		head, _, ok := strings.Cut(report, "\n\n")
		if !ok {
			t.Fatalf("the report has no blank line:\n%s", report)
		}
		return "```text\n" + head + "\n```\n"
	}
	md := out("report", "--format", "markdown", demoReport)
	head, _, ok := strings.Cut(md, "\n## The run\n")
	if !ok {
		t.Fatalf("the demo's Markdown report has no run section:\n%s", md)
	}
	return map[string]string{
		"help":         "```text\n" + out("--help") + "```\n",
		"help-report":  "```text\n" + out("report", "--help") + "```\n",
		"help-compare": "```text\n" + out("compare", "--help") + "```\n",
		"help-logs":    "```text\n" + out("logs", "--help") + "```\n",
		"help-watch":   "```text\n" + out("watch", "--help") + "```\n",
		"demo-text":    "```text\n" + out("report", demoReport) + "```\n",
		"demo-brief":   "```text\n" + out("report", "--brief", demoReport) + "```\n",
		"demo-md":      "```markdown\n" + strings.TrimRight(head, "\n") + "\n```\n",
		"demo-head":    top(out("report", demoReport)),
		"gate-head":    top(exits(exitFail, readmeGate...)),
	}
}

// readmeGate is the release gate the README runs on the demo's saved
// report, as `go run . report …`.
var readmeGate = []string{"report", "--max-failure-rate", "0.1%", "--max-p99", "800ms", "--fail-on-verdict", demoReport}

var genBlock = regexp.MustCompile(`(?s)(<!-- GEN:([a-z-]+) -->\n)(.*?)(<!-- /GEN:([a-z-]+) -->)`)

// docPages returns the README and every page of docs/, the README first.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ has no page")
	}
	return append([]string{readme}, pages...)
}

// TestReadmeGenerated: the --help in docs/ is pinprobe's, and the sample
// text and Markdown reports of the README and docs/ are what pinprobe
// renders of the demo's saved report now. Each block the test knows is on
// exactly one page.
func TestReadmeGenerated(t *testing.T) {
	want := readmeBlocks(t)
	seen := map[string]string{}
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		updated := genBlock.ReplaceAllStringFunc(string(data), func(m string) string {
			sub := genBlock.FindStringSubmatch(m)
			name, body := sub[2], sub[3]
			if sub[5] != name {
				t.Errorf("%s: block GEN:%s ends with /GEN:%s", page, name, sub[5])
				return m
			}
			w, ok := want[name]
			if !ok {
				return m // written by hand
			}
			if seen[name] != "" {
				t.Errorf("GEN:%s is on %s and on %s; want it on one page", name, seen[name], page)
			}
			seen[name] = page
			if body != w && !*docfix.Update {
				t.Errorf("%s: GEN:%s block is not what pinprobe prints now (go test . -run TestReadmeGenerated -update rewrites it):\ngot:\n%s\nwant:\n%s", page, name, body, w)
			}
			return sub[1] + w + sub[4]
		})
		if *docfix.Update && updated != string(data) {
			if err := os.WriteFile(page, []byte(updated), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name := range want {
		if seen[name] == "" {
			t.Errorf("neither the README nor docs/ has a GEN:%s block", name)
		}
	}
}

const readme = "README.md"

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
// go.mod's, said before the first command; the first block of commands
// holds the demo and the whole test suite, and the silent first build is
// said beside it; the examples come in the README, each output the README
// makes of a command beside that command, and the full --help in
// docs/usage.md, not in the README.
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
	if firstCmd >= 0 {
		block, _, _ := strings.Cut(doc[firstCmd+len("```sh\n"):], "```")
		for _, cmd := range []string{"go run . --demo", "go test -race ./..."} {
			if !strings.Contains("\n"+block, "\n"+cmd+" ") {
				t.Errorf("%s: the first block of commands lacks %q:\n%s", readme, cmd, block)
			}
		}
	}
	if !strings.Contains(doc, "prints nothing while it does: about 40 s") {
		t.Errorf("%s does not say that the first build compiles silently for about 40 s", readme)
	}
	if gate := "\ngo run . " + strings.Join(readmeGate, " ") + "\n"; !strings.Contains(doc, gate) {
		t.Errorf("%s: GEN:gate-head is the output of%swhich the README does not show", readme, gate)
	}
	if !strings.Contains(doc, "\n## Examples\n") {
		t.Errorf("%s has no ## Examples", readme)
	}
	if strings.Contains(doc, "<!-- GEN:help -->") {
		t.Errorf("%s carries the whole --help; it belongs in docs/usage.md", readme)
	}
	usage, err := os.ReadFile("docs/usage.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(usage), "<!-- GEN:help -->") {
		t.Errorf("docs/usage.md has no GEN:help block")
	}
}

// TestInstallLines: every `go install` the README and the examples give
// works — `go install .` in a checkout (run here into a temporary GOBIN),
// or the published module path at a version — and the Go the CI example
// sets up is go.mod's or later.
func TestInstallLines(t *testing.T) {
	t.Parallel()
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
	// The workflow runs as written: it checks pinprobe out, sets up the Go
	// of its go.mod, and builds it from there (the module is not published
	// yet, so nothing installs it by its path).
	for _, want := range []string{"uses: actions/checkout@", "path: pinprobe-src", "go-version-file: pinprobe-src/go.mod",
		`go build -C pinprobe-src -o "$RUNNER_TEMP/bin/pinprobe" .`, `"$RUNNER_TEMP/bin" >> "$GITHUB_PATH"`} {
		if !strings.Contains(string(ci), want) {
			t.Errorf("examples/ci/pinprobe-gate.yml lacks %q", want)
		}
	}
	if strings.Contains(string(ci), "go install") {
		t.Errorf("examples/ci/pinprobe-gate.yml installs a module that is not published; build it from its checkout")
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
	if err != nil || !strings.HasPrefix(string(out), "pinprobe "+release) {
		t.Errorf("go install . then pinprobe version: %q, %v; want pinprobe %s…", out, err, release)
	}
}

// TestFuzzScriptNamesEveryTarget: .ci/fuzz names every fuzz target of the
// module by its package, and nothing else: a target that moved with its
// package would otherwise be fuzzed by nobody, go test -fuzz finding
// nothing to run in the old place.
func TestFuzzScriptNamesEveryTarget(t *testing.T) {
	ci, err := os.ReadFile(".ci/fuzz")
	if err != nil {
		t.Fatal(err)
	}
	_, list, found := strings.Cut(string(ci), "\ntargets=(")
	list, _, ended := strings.Cut(list, ")")
	if !found || !ended {
		t.Fatal(".ci/fuzz has no list of fuzz targets (targets=(…))")
	}
	listed := strings.Fields(strings.ReplaceAll(list, "\\", " "))
	var defined []string
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`).FindAllSubmatch(src, -1) {
			defined = append(defined, filepath.Dir(path)+":"+string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	slices.Sort(defined)
	if !slices.Equal(listed, defined) {
		t.Errorf(".ci/fuzz fuzzes\n  %s\nthe module's fuzz targets are\n  %s", strings.Join(listed, "\n  "), strings.Join(defined, "\n  "))
	}
}
