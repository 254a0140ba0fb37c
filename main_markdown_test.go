package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// TestDemoMarkdown runs the demo with --format markdown: the ticket-ready
// report names the failing family in its title, carries the Azure log query,
// and shows the failing address.
func TestDemoMarkdown(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"--demo", "-q", "--duration", "1s", "--rate", "60", "--format", "markdown"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, errb.String())
	}
	doc := out.String()
	title, _, _ := strings.Cut(doc, "\n")
	if !strings.HasPrefix(title, "# pinprobe: failures concentrate on ") || !strings.HasSuffix(title, " — "+demoHost) {
		t.Errorf("title = %q; want \"# pinprobe: failures concentrate on … — %s\"", title, demoHost)
	}
	for _, want := range []string{"AGWAccessLogs", "| where ClientPort in (", "> **Verdict: concentrated.**", "## Sample requests"} {
		if !strings.Contains(doc, want) {
			t.Errorf("markdown report lacks %q:\n%s", want, doc)
		}
	}
	if hasIPv6Loopback() {
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

func hasIPv6Loopback() bool {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
