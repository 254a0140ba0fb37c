package main

// The demo: --demo probes a gateway of its own that shows both faces of the
// incident: an address whose (IPv6) backend is unreachable, and an address
// that fronts several instances, one of them broken.

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/demo"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// TestDemo: the IPv6 address (or the last address without IPv6) answers
// 502 to everything; 127.0.0.2 fronts four instances, each connection kept
// on one, and gw-3 answers 502; 127.0.0.1 is healthy. The verdict names the
// address, the instance and the connections.
func TestDemo(t *testing.T) {
	t.Parallel()
	// 5 s, not 3: at 3 s the moments test had too few moments to tell the
	// instance from a moment once in ten race runs (p=1.4e-4), and the
	// verdict rightly said it could not tell them apart.
	rep, _, _ := probeReport(t, "--demo", "--duration", "5s", "--rate", "60")
	addrs := endpointAddrs(rep)
	if len(addrs) < 2 {
		t.Fatalf("demo has endpoints %v; want at least two", addrs)
	}
	failing := rep.Endpoints[len(rep.Endpoints)-1].Address // ::1, or the last IPv4 address without IPv6
	shared := ""
	if len(addrs) >= 3 {
		shared = addrs[len(addrs)-2]
	}
	for _, e := range rep.Endpoints {
		if e.Host != demo.Host {
			t.Errorf("endpoint %s: host %q; want %s", e.Address, e.Host, demo.Host)
		}
		if e.Requests == 0 {
			t.Errorf("endpoint %s: no request", e.Address)
			continue
		}
		switch e.Address {
		case failing:
			if !equalCounts(e.Status, map[string]int64{"502": e.Requests}) || e.FailureRate != 1 {
				t.Errorf("failing endpoint %s: status %v, errors %v, failure_rate %v; want 100%% 502",
					e.Address, e.Status, e.Errors, e.FailureRate)
			}
		case shared:
			// One instance in four: a quarter of the connections, give or take one.
			if e.FailureRate < 0.1 || e.FailureRate > 0.4 || e.Status["502"] != e.Failed {
				t.Errorf("shared endpoint %s: %d of %d failed (status %v); want about a quarter, all 502", e.Address, e.Failed, e.Requests, e.Status)
			}
		default:
			if e.Failed != 0 || !equalCounts(e.Status, map[string]int64{"200": e.Requests}) {
				t.Errorf("healthy endpoint %s: %d failed, status %v, errors %v; want all 200", e.Address, e.Failed, e.Status, e.Errors)
			}
		}
	}
	if shared == "" {
		t.Logf("this machine has too few loopback addresses for the shared-address face")
		return
	}
	// Who answered: every failure of the shared address came from gw-3.
	groups := map[string]report.Group{}
	for _, g := range rep.Groups {
		if g.Header == "X-Served-By" {
			groups[g.Value] = g
		}
	}
	if len(groups) != demo.Instances {
		t.Errorf("groups %v; want the %d instances of X-Served-By", rep.Groups, demo.Instances)
	}
	for v, g := range groups {
		if want := map[bool]int64{true: g.Requests, false: 0}[v == "gw-3"]; g.Failed != want {
			t.Errorf("X-Served-By: %s: %d of %d failed; want %d", v, g.Failed, g.Requests, want)
		}
	}
	// Two faults: ::1, and gw-3 behind the shared address. gw-3's failures
	// are those of the shared address's failing connections, the same
	// requests seen two ways: one suspect, with the connections as its
	// evidence, not a third fault.
	var kinds []string
	for _, s := range rep.Verdict.Suspects {
		switch s.Kind {
		case "endpoint":
			kinds = append(kinds, "endpoint "+s.Address)
		case "group":
			k := "group " + s.Group + " behind " + s.Address
			if s.Connections > 0 && s.FailingConnections > 0 {
				k += " on connections"
			}
			kinds = append(kinds, k)
		case "connections":
			kinds = append(kinds, "connections "+s.Address)
		}
	}
	slices.Sort(kinds)
	if want := []string{"endpoint " + failing, "group X-Served-By: gw-3 behind " + shared + " on connections"}; !slices.Equal(kinds, want) {
		t.Errorf("suspects %v; want %v\nverdict: %s %q", kinds, want, rep.Verdict.Summary, rep.Verdict.Notes)
	}
	if !strings.Contains(rep.Verdict.Summary, "one fault, seen by its header and by its connections") {
		t.Errorf("summary does not say gw-3 and the failing connections are one fault:\n%s", rep.Verdict.Summary)
	}
	if len(rep.DNS) != 1 || rep.DNS[0].Source != "demo" || rep.DNS[0].Host != demo.Host {
		t.Errorf("dns = %+v; want one entry for %s from demo", rep.DNS, demo.Host)
	}
}

// TestDemoJoinCommandPastes runs the demo in a tmux pane, built (at 80 and
// 120 columns) and through go run (at 80), and pastes the command it ends
// on, as a user would: the screen's line that starts it, its soft wraps
// joined (capture-pane -J), run by a shell from the same directory, joins
// the demo's files and traces the failures. The command is pinprobe as it
// was run: the binary's path, or go run . (it said "pinprobe logs", which
// a go run or a build in a checkout leaves on no PATH). At 80×24 with its
// report on the terminal, the last screen holds the verdict, the join's
// answer and the command whole.
func TestDemoJoinCommandPastes(t *testing.T) {
	t.Parallel()
	bin := buildPinprobe(t)
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		width int
		run   string // the demo's command, in the checkout
		lead  string // how its join command starts
		text  bool   // the report on the terminal, 24 rows
	}{
		{"built-80", 80, words.ShellQuote(bin), words.ShellQuote(bin) + " logs --log-format ", true},
		{"built-120", 120, words.ShellQuote(bin), words.ShellQuote(bin) + " logs --log-format ", false},
		{"go-run-80", 80, "go run .", "go run . logs --log-format ", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			env := "TMPDIR=" + words.ShellQuote(dir) + " XDG_CACHE_HOME=" + words.ShellQuote(dir)
			demo, height := " --demo -q -d 2s --format json > /dev/null", 40
			if tt.text {
				demo, height = " --demo -d 2s", 24
			}
			run := "cd " + words.ShellQuote(root) + " && " + env + " " + tt.run + demo + "; echo DEMO-ENDED; sleep 60"
			pane := startTmux(t, dir, "demo", tt.width, height, run)
			var screen string
			for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline) && !strings.Contains(screen, "DEMO-ENDED"); {
				time.Sleep(250 * time.Millisecond)
				screen = pane.screen("-J")
			}
			if !strings.Contains(screen, "DEMO-ENDED") {
				t.Fatalf("the demo did not end in 90 s:\n%s", screen)
			}
			if tt.text && (!strings.Contains(screen, "\nVERDICT CONCENTRATED ") || !strings.Contains(screen, "502s were routed to")) {
				t.Errorf("the last screen at 80×24 lacks the verdict or the join's answer:\n%s", screen)
			}
			var command string
			for _, l := range strings.Split(screen, "\n") {
				if strings.HasPrefix(l, tt.lead) {
					command = strings.TrimRight(l, " ")
				}
			}
			if command == "" {
				t.Fatalf("no line of the screen is the join command, whole, starting %q:\n%s", tt.lead, screen)
			}
			where := "the demo's files stay in " + filepath.Join(dir, "pinprobe", "demo", "run-")
			if !strings.Contains(screen, where) && !strings.Contains(strings.ReplaceAll(screen, "\n  ", " "), where) {
				t.Errorf("the demo does not say its files stay in %s…:\n%s", where, screen)
			}
			sh := exec.Command("sh", "-c", command)
			sh.Dir = root
			sh.Env = append(os.Environ(), "NO_COLOR=1")
			out, err := sh.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "FAILURES TRACED") {
				t.Errorf("the pasted command %q: %v\n%s", command, err, out)
			}
		})
	}
}

// TestDemoLeavesOneDirectory runs the demo twice with its output piped:
// the second replaces the first's files, and neither leaves anything in
// the temporary directory.
func TestDemoLeavesOneDirectory(t *testing.T) {
	t.Parallel()
	bin := buildPinprobe(t)
	cache, tmp := t.TempDir(), t.TempDir()
	for range 2 {
		cmd := exec.Command(bin, "--demo", "-q", "-d", "1s", "--format", "json")
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "TMPDIR="+tmp)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("demo: %v\n%.2000s", err, out)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(cache, "pinprobe", "demo", "*"))
	left, _ := os.ReadDir(tmp)
	if len(runs) != 1 || !strings.HasPrefix(filepath.Base(runs[0]), "run-") || len(left) != 0 {
		t.Errorf("after two demos: %q under the cache, %d entries in TMPDIR; want one run-… directory and nothing", runs, len(left))
	}
	if _, err := os.Stat(filepath.Join(runs[0], "access.log")); err != nil {
		t.Errorf("the last demo's access log: %v", err)
	}
}

// TestDemoJoinsWhateverOSays: the demo joins its own copy of the report
// with its log, whatever -o names: with a file that cannot be written it
// exits 4 and still says which backend failed (it joined the -o file
// before, a stale one or none; and with -o - it read standard input).
func TestDemoJoinsWhateverOSays(t *testing.T) {
	t.Parallel()
	code, _, stderr := pinprobe(t, "--demo", "-q", "-d", "1s", "--format", "json", "-o", "/dev/full")
	if code != exitWrite || !strings.Contains(stderr, "demo:   All ") || !strings.Contains(stderr, "were routed to") {
		t.Errorf("-o /dev/full: exit %d; want %d, and the demo's join said; stderr:\n%s", code, exitWrite, stderr)
	}
}

// TestGoRunBinary: where go run leaves the binary it runs, and where a
// build does not.
func TestGoRunBinary(t *testing.T) {
	for exe, want := range map[string]bool{
		"/root/.cache/go-build/62/6275473787105f742080c413fe3063f9776c92da6af19b8bd18c1d9fbb6f3747-d/pinprobe": true,
		"/tmp/go-build1234/b001/exe/pinprobe": true,
		"/usr/local/bin/pinprobe":             false,
		"/home/me/pinprobe/pinprobe":          false,
		"/home/me/exe/pinprobe":               false,
	} {
		if got := goRunBinary(exe); got != want {
			t.Errorf("goRunBinary(%q) = %v; want %v", exe, got, want)
		}
	}
}

// TestDemoDirStaysLocked: a demo's directory stays locked, and its files
// kept, while the process that made it runs, whatever the collector does
// (an unreferenced lock file was closed by it, its lock with it, and a
// demo beside it removed the directory).
func TestDemoDirStaysLocked(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, err := newDemoDir()
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	if !inUse(dir) {
		t.Fatalf("%s is not locked after a collection", dir)
	}
	if _, err := newDemoDir(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a second demo of the same process removed the first's directory: %v", err)
	}
}
