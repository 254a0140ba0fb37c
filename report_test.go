package main

import (
	"strings"
	"testing"

	"pinprobe/internal/demo"
	"pinprobe/internal/testserver"
)

// TestDemoMarkdown runs the demo with --format markdown: the ticket-ready
// report names the failing family in its title, carries the Azure log query,
// and shows the failing address.
func TestDemoMarkdown(t *testing.T) {
	code, doc, stderr := pinprobe(t, "--demo", "-q", "--duration", "1s", "--rate", "60", "--format", "markdown")
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	title, _, _ := strings.Cut(doc, "\n")
	if !strings.HasPrefix(title, "# pinprobe: failures concentrate on ") || !strings.HasSuffix(title, " — "+demo.Host) {
		t.Errorf("title = %q; want \"# pinprobe: failures concentrate on … — %s\"", title, demo.Host)
	}
	for _, want := range []string{"AGWAccessLogs", "| where ClientPort in (", "> **Verdict: concentrated.**", "## Sample requests"} {
		if !strings.Contains(doc, want) {
			t.Errorf("markdown report lacks %q:\n%s", want, doc)
		}
	}
	if testserver.HasIPv6Loopback() {
		if !strings.Contains(title, "IPv6") {
			t.Errorf("title = %q; want it to name IPv6", title)
		}
		if !strings.Contains(doc, "| ✗   | **::1** ") {
			t.Errorf("markdown report does not mark ::1 as failing:\n%s", doc)
		}
	}
	if strings.Contains(doc, "\x1b[") {
		t.Errorf("markdown report contains ANSI escapes")
	}
}
