package main

// The README's generated blocks, between <!-- GEN:name --> and
// <!-- /GEN:name -->, are what pinprobe prints. Those this test knows are
// made here (go test . -run TestReadmeGenerated -update rewrites them); the
// others (schemas, perf) are written by hand.

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"pinprobe/internal/fixture"
)

// readmeBlocks makes each generated block the test knows: --help, and the
// demo's text report, its brief text report and the start of its Markdown
// report, rendered from its saved report (examples/demo-report.json), so
// they say what the examples say, and the same on every run.
func readmeBlocks(t *testing.T) map[string]string {
	t.Helper()
	out := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := pinprobe(t, args...)
		if code != exitOK {
			t.Fatalf("pinprobe %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return stdout
	}
	md := out("report", "--format", "markdown", demoReport)
	head, _, ok := strings.Cut(md, "\n## The run\n")
	if !ok {
		t.Fatalf("the demo's Markdown report has no run section:\n%s", md)
	}
	return map[string]string{
		"help":       "```text\n" + out("--help") + "```\n",
		"demo-text":  "```text\n" + out("report", demoReport) + "```\n",
		"demo-brief": "```text\n" + out("report", "--brief", demoReport) + "```\n",
		"demo-md":    "```markdown\n" + strings.TrimRight(head, "\n") + "\n```\n",
	}
}

var genBlock = regexp.MustCompile(`(?s)(<!-- GEN:([a-z-]+) -->\n)(.*?)(<!-- /GEN:([a-z-]+) -->)`)

// TestReadmeGenerated: the README's --help is pinprobe's, and its sample
// text and Markdown reports are what pinprobe renders of the demo's saved
// report now.
func TestReadmeGenerated(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := readmeBlocks(t)
	seen := map[string]bool{}
	updated := genBlock.ReplaceAllStringFunc(string(data), func(m string) string {
		sub := genBlock.FindStringSubmatch(m)
		name, body := sub[2], sub[3]
		if sub[5] != name {
			t.Errorf("README: block GEN:%s ends with /GEN:%s", name, sub[5])
			return m
		}
		w, ok := want[name]
		if !ok {
			return m // written by hand
		}
		seen[name] = true
		if body != w && !*fixture.Update {
			t.Errorf("README's GEN:%s block is not what pinprobe prints now (go test . -run TestReadmeGenerated -update rewrites it):\ngot:\n%s\nwant:\n%s", name, body, w)
		}
		return sub[1] + w + sub[4]
	})
	for name := range want {
		if !seen[name] {
			t.Errorf("README has no GEN:%s block", name)
		}
	}
	if *fixture.Update && updated != string(data) {
		if err := os.WriteFile("README.md", []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
