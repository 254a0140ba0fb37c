package main

// The README is the contract: what it quotes of pinprobe is pinprobe's.

import (
	"bytes"
	"os"
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
