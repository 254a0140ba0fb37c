package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/fixture"
)

// TestSuggestedCommandsAreQuoted: the shell commands pinprobe suggests
// (nginx's and HAProxy's grep) hold only the client addresses of a saved
// report that are IP addresses, each argument quoted: one that breaks out
// of the quotes, as a hostile or corrupted report's client.local_addresses
// would, is left out, and pasting the command runs nothing else. The
// commands are run by sh, with grep and awk as functions that record their
// arguments.
func TestSuggestedCommandsAreQuoted(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	hostile := []string{
		"203.0.113.50",
		"1.2.3.4') /dev/null; touch pwned-nginx; echo ('",
		"fe80::1%eth0'$(touch pwned-zone)'",
		"::1",
		"$(touch pwned-sub)",
	}
	for _, withPorts := range []bool{false, true} {
		r := fixture.GoldenReport(t)
		for i := range r.Fingerprints {
			r.Fingerprints[i].Producer = "" // every gateway's queries
		}
		r.Client.LocalAddresses = hostile
		if withPorts {
			r.Client.Ports, r.Client.PortsCount, r.Client.PortMin, r.Client.PortMax = []int{40000, 40001}, 2, 40000, 40001
		} else {
			r.Client.Ports, r.Client.PortsCount = nil, 0
		}
		v := NewView(r)
		var ran int
		for _, g := range v.Logs.Gateways {
			for _, q := range g.Queries {
				if strings.Contains(q.Text, "touch") || strings.Contains(q.Text, "eth0") {
					t.Errorf("%s %s holds a value that is not an IP address:\n%s", g.Name, q.Kind, q.Text)
				}
				if q.Lang != "sh" {
					continue
				}
				ran++
				dir := t.TempDir()
				script := `grep() { printf '%s\n' "$@" >> args; }; awk() { printf '%s\n' "$@" >> args; }` + "\n" + q.Text
				cmd := exec.Command(sh, "-c", script)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s %s: sh: %v\n%s\n%s", g.Name, q.Kind, err, out, q.Text)
				}
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if e.Name() != "args" {
						t.Errorf("%s %s made %s when run:\n%s", g.Name, q.Kind, e.Name(), q.Text)
					}
				}
				args, _ := os.ReadFile(filepath.Join(dir, "args"))
				want := `^(203\.0\.113\.50|fe80::1|::1) `
				if q.Kind == LogHAProxy && !withPorts {
					want = `(203\.0\.113\.50|fe80::1|::1):[0-9]+ \[`
				} else if q.Kind == LogHAProxy {
					want = `:(40000|40001) \[`
				}
				if q.Kind != LogHAProxyFailing && !slices.Contains(strings.Split(string(args), "\n"), want) {
					t.Errorf("%s %s: grep was given\n%s\nwant the argument %q", g.Name, q.Kind, args, want)
				}
			}
		}
		if ran < 2 {
			t.Errorf("%d shell commands run; want nginx's and HAProxy's", ran)
		}
		for _, f := range v.Logs.Filters {
			for _, s := range f.Value {
				if strings.Contains(s.Text, "touch") || strings.Contains(s.Text, "eth0") {
					t.Errorf("filter %s holds a value that is not an IP address: %q", f.Name, s.Text)
				}
			}
		}
	}
}

// TestPortFilterNotes: a query's filter on pinprobe's client ports says it
// may be deleted behind a NAT, and deleting what it says leaves a query
// that still parses: after a filter of one line, "delete this line"; before
// a list of ports over several lines, "delete the filter below, to its
// closing parenthesis", and the filter ends there. No line of a KQL or SQL query
// ends in a space.
func TestPortFilterNotes(t *testing.T) {
	for _, n := range []int{2, 40} {
		r := fixture.GoldenReport(t)
		for i := range r.Fingerprints {
			r.Fingerprints[i].Producer = "" // every gateway's queries
		}
		r.Client.Ports = nil
		for p := range n {
			r.Client.Ports = append(r.Client.Ports, 40000+2*p)
		}
		r.Client.PortsCount, r.Client.PortMin, r.Client.PortMax = n, 40000, 40000+2*(n-1)
		noted := 0
		for _, g := range NewView(r).Logs.Gateways {
			for _, q := range g.Queries {
				lines := strings.Split(q.Text, "\n")
				for i, l := range lines {
					if q.Lang != "sh" && strings.HasSuffix(l, " ") {
						t.Errorf("%s %s: line %d ends in a space: %q", g.Name, q.Kind, i+1, l)
					}
					switch {
					case strings.Contains(l, "this line"):
						noted++
						if c := strings.TrimSpace(l); strings.HasPrefix(c, "//") || strings.HasPrefix(c, "--") || !strings.Contains(l, "(") || !strings.Contains(l, ")") {
							t.Errorf("%s %s: %q is not a whole filter on one line", g.Name, q.Kind, l)
						}
					case strings.Contains(l, "the filter below, to its closing parenthesis"):
						noted++
						end := i + 1
						for end < len(lines) && !strings.HasSuffix(lines[end], ")") {
							end++
						}
						if i+1 >= len(lines) || !strings.Contains(lines[i+1], "(") || end == len(lines) || end == i+1 ||
							end+1 < len(lines) && !strings.HasPrefix(lines[end+1], "| ") && !strings.HasPrefix(lines[end+1], "  AND") && !strings.HasPrefix(lines[end+1], "ORDER") && !strings.HasPrefix(lines[end+1], "GROUP") {
							t.Errorf("%s %s: the filter after %q is not the lines up to its closing parenthesis:\n%s", g.Name, q.Kind, l, q.Text)
						}
					}
				}
			}
		}
		if noted < 3 {
			t.Errorf("%d ports: %d port filters with their note; want Azure's and ALB's", n, noted)
		}
	}
}
