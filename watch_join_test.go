package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/demo"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestWatchWindowJoinsTheGatewayLog: a window's report, kept with -o, is
// a saved report for pinprobe logs: joined with the demo gateway's whole
// access log (every window's requests), it places exactly the window's
// requests, counts the other windows' lines as outside it, and traces the
// window's 502s to the IPv6 backend.
func TestWatchWindowJoinsTheGatewayLog(t *testing.T) {
	t.Parallel()
	var log lockedBuffer
	g, err := demo.StartLogged(&log)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var addrs []string
	for _, a := range g.Addrs {
		addrs = append(addrs, a.String())
	}
	dir := t.TempDir()
	code, _, stderr := pinprobe(t, "watch", "--listen", "127.0.0.1:0", "-r", "40", "--window", "1s", "-d", "1500ms", "-o", dir,
		"--resolve", demo.Host+":"+strconv.Itoa(int(g.Port))+":"+strings.Join(addrs, ","), g.URL())
	if code != exitOK {
		t.Fatalf("watch: exit %d: %s", code, stderr)
	}
	logPath := filepath.Join(dir, "access.log")
	if err := os.WriteFile(logPath, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := int64(strings.Count(log.String(), "\n"))
	window := filepath.Join(dir, windowFiles(t, dir)[0])
	b, err := os.ReadFile(window)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Parse(b, window)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := pinprobe(t, "logs", "--format", "json", "--log-format", demo.LogFormat, window, logPath)
	if code != exitOK {
		t.Fatalf("logs: exit %d: %s", code, stderr)
	}
	var j struct {
		Lines    struct{ Records, Run, Outside int64 }
		Findings []struct{ Text string }
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatal(err)
	}
	t.Logf("window: %d requests; log: %d lines, %d placed, %d outside", rep.Totals.Requests, lines, j.Lines.Run, j.Lines.Outside)
	if j.Lines.Run != rep.Totals.Requests || j.Lines.Outside != lines-rep.Totals.Requests || rep.Totals.Requests >= lines {
		t.Errorf("the join placed %d lines and left %d outside, of %d; want the window's %d placed and the rest outside", j.Lines.Run, j.Lines.Outside, lines, rep.Totals.Requests)
	}
	if !strings.Contains(stdout, "(IPv6)") {
		t.Errorf("the join does not trace the 502s to the IPv6 backend:\n%.2000s", stdout)
	}
}
