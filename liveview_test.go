package main

// The live view watched in a real terminal: tmux, 80 columns wide.

import (
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pinprobe/pinprobe/internal/testserver"
	"github.com/pinprobe/pinprobe/internal/words"
)

// TestLiveViewInTmux runs pinprobe with --targets and long URLs in a tmux
// pane of 80 columns and reads the screen while the run lasts: the bar
// keeps its failure figures, the line under it says the rate achieved and
// the current p50/p99, and each failing endpoint's row keeps its address
// and figures whole, its URL shortened ("19 re" was all that was left of
// "1234 req  100.0% failed" behind a long URL). When the run ends, the
// view is gone and the report is on the screen.
func TestLiveViewInTmux(t *testing.T) {
	t.Parallel()
	bin := buildPinprobe(t)
	const sign = "/api/documents/demo/sign"
	const verify = "/api/v2/tenants/acme-corporation/documents/demo/archive/2026/verification-report"
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Host: "sign.example.com",
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: func(n int64, r *http.Request) testserver.Answer {
			if n%2 == 0 || r.URL.Path == verify {
				return testserver.Answer{Status: http.StatusBadGateway}
			}
			return testserver.Answer{}
		}},
	}, testserver.Lo4a, testserver.Lo4b)
	dir := t.TempDir()
	base := strings.TrimSuffix(f.URL(), "/")
	targets := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(targets, []byte(base+sign+"\n"+base+verify+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The run lasts 8 s; the pane's shell waits after it, so the screen
	// can be read once it is over. kill-server ends both.
	run := words.ShellQuote(bin) + " --targets " + words.ShellQuote(targets) + " --resolve " + words.ShellQuote(f.Resolve()) +
		" -r 40 -d 8s -o " + words.ShellQuote(filepath.Join(dir, "report.json")) + " > " + words.ShellQuote(filepath.Join(dir, "report.txt")) +
		"; echo RUN-ENDED; sleep 60"
	pane := startTmux(t, dir, "live", 80, 24, run)

	pace := regexp.MustCompile(`^  \d+\.\d req/s of 40 planned · p50 \d+(\.\d+)?m?s · p99 \d+(\.\d+)?m?s`)
	row := regexp.MustCompile(`^  ✗ 127\.0\.0\.2 (\S+) +\d+ req +\d+\.\d% failed$`)
	bar := regexp.MustCompile(`^ *\d+% \S+  \d+\.\ds/8s  \d+ req(  ipv4 (ok|\d+ failed \(\d+%\)|\d+(\.\d)?% failed))?(  \d+ in flight)?$`)
	var screen string
	var rows []string
	sawPace := false
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		screen = pane.screen()
		if strings.Contains(screen, "RUN-ENDED") {
			break
		}
		lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
		var got []string
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Fatalf("a line of %d columns on an 80-column screen: %q", n, l)
			}
			sawPace = sawPace || pace.MatchString(l)
			if strings.Contains(l, "[red]") || strings.Contains(l, "[reset]") {
				t.Fatalf("the bar shows its colour tags under NO_COLOR: %q", l)
			}
			if strings.Contains(l, "░") && !bar.MatchString(l) {
				t.Fatalf("the bar's figures are cut: %q", l)
			}
			if strings.HasPrefix(l, "  ✗ ") {
				got = append(got, l)
			}
		}
		if len(got) == 2 && sawPace {
			rows = got
			break
		}
	}
	if !sawPace || len(rows) != 2 {
		t.Fatalf("the live view never showed the pace line and both failing endpoints at 80 columns:\n%s", screen)
	}
	t.Logf("the live view at 80 columns:\n%s", strings.TrimRight(screen, "\n"))
	var urls []string
	for _, r := range rows {
		m := row.FindStringSubmatch(r)
		if m == nil {
			t.Fatalf("a failing endpoint's row lost its address or figures: %q", r)
		}
		urls = append(urls, m[1])
	}
	if !strings.Contains(strings.Join(urls, " "), "…") || !strings.Contains(strings.Join(urls, " "), "verification-report") {
		t.Errorf("the long URL is not shortened in its middle: %q", urls)
	}
	// The end: the view cleared, the report written.
	for time.Now().Before(deadline) && !strings.Contains(screen, "RUN-ENDED") {
		time.Sleep(250 * time.Millisecond)
		screen = pane.screen()
	}
	if !strings.Contains(screen, "RUN-ENDED") {
		t.Fatalf("the run did not end in time:\n%s", screen)
	}
	if strings.Contains(screen, "req/s of 40 planned") || strings.Contains(screen, "% failed") {
		t.Errorf("the live view is left on the screen after the run:\n%s", screen)
	}
	if rep, err := os.ReadFile(filepath.Join(dir, "report.txt")); err != nil || !strings.HasPrefix(string(rep), "VERDICT ") {
		t.Errorf("the report does not start with its verdict (%v):\n%.300s", err, rep)
	}
}

// TestLiveViewNarrow runs pinprobe in tmux panes of 60 and 40 columns: the
// live view's first line keeps the failing family's figure whole ("ipv4
// 50% failed"), at 60 beside the bar's cells, at 40 without them; at 60
// it printed "ipv4 1", at 50 nothing.
func TestLiveViewNarrow(t *testing.T) {
	t.Parallel()
	bin := buildPinprobe(t)
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Host: "app.example.com",
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: func(int64, *http.Request) testserver.Answer {
			return testserver.Answer{Status: http.StatusBadGateway}
		}},
	}, testserver.Lo4a, testserver.Lo4b)
	figure := regexp.MustCompile(`ipv4 \d+(\.\d)?% failed`)
	for _, width := range []int{60, 40} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			run := words.ShellQuote(bin) + " --resolve " + words.ShellQuote(f.Resolve()) + " -r 40 -d 4s -o " + words.ShellQuote(filepath.Join(dir, "report.json")) +
				" " + words.ShellQuote(f.URL()) + " > /dev/null; echo RUN-ENDED; sleep 60"
			pane := startTmux(t, dir, "live", width, 24, run)
			var screen string
			seen := false
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !seen; {
				time.Sleep(200 * time.Millisecond)
				screen = pane.screen()
				if strings.Contains(screen, "RUN-ENDED") {
					break
				}
				for _, l := range strings.Split(screen, "\n") {
					if n := utf8.RuneCountInString(l); n > width {
						t.Fatalf("a line of %d columns on a %d-column screen: %q", n, width, l)
					}
					seen = seen || figure.MatchString(l)
				}
			}
			if !seen {
				t.Errorf("at %d columns the live view never showed the failing family's figure whole:\n%s", width, screen)
			}
		})
	}
}
