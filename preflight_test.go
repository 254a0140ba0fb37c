package main

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"pinprobe/internal/testserver"
)

// TestPreflightStopsWhenNothingCanWork: when every endpoint fails its
// preflight for the same reason, pinprobe sends no load, exits 3 and names
// the cause and the flag that fixes it.
func TestPreflightStopsWhenNothingCanWork(t *testing.T) {
	// An HTTPS server on 127.0.0.1 whose certificate, signed by a test CA,
	// is for app.test only.
	pki := testserver.NewPKI(t)
	f := testserver.StartFleet(t, testserver.FleetOptions{PKI: pki}, testserver.Lo4a)
	ca := pki.CAFile
	resolve := "--resolve=" + f.Resolve()
	url := f.URL()
	wrongName := fmt.Sprintf("https://other.test:%d/", f.Port())

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"untrusted CA", []string{resolve, url}, exitNoAddress, []string{"fails TLS verification", "unknown authority", "--cacert FILE", "--insecure"}},
		{"certificate for another name", []string{"--cacert", ca, fmt.Sprintf("--resolve=other.test:%d:127.0.0.1", f.Port()), wrongName}, exitNoAddress,
			[]string{"certificate is for another name", "other.test", "app.test", "check the URL's host name"}},
		{"trusted", []string{"--cacert", ca, resolve, url}, exitOK, []string{"certificate verified against the host name"}},
		{"insecure says so", []string{"--insecure", resolve, url}, exitOK, []string{"certificate NOT verified: --insecure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.Total()
			code, _, stderr := pinprobe(t, append([]string{"-q", "--rate", "200", "-n", "10"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d; want %d; stderr:\n%s", code, tt.code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			sent := f.Total() - before
			f.CheckPlacement(t)
			if tt.code == exitNoAddress && sent != 0 {
				t.Errorf("the server served %d requests; a stopped run sends none", sent)
			}
			if tt.code == exitOK && sent != 10 {
				t.Errorf("the server served %d requests; want 10", sent)
			}
		})
	}
}

func TestPreflightStopRefusedEverywhere(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	// A port bound on 127.0.0.1 (never listening) for the whole test, where
	// 127.0.0.2 has no listener either: both refuse.
	closed := testserver.ClosedPort(t, testserver.Lo4a)
	requireRefused(t, netip.AddrPortFrom(testserver.Lo4a, closed))
	requireRefused(t, netip.AddrPortFrom(testserver.Lo4b, closed))
	requireRefused(t, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.3"), f.Port()))
	code, _, stderr := pinprobe(t, "-q", "-n", "5", "--resolve", fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2", closed), fmt.Sprintf("http://app.test:%d/", closed))
	if code != exitNoAddress || !strings.Contains(stderr, fmt.Sprintf("every address refuses connections on port %d", closed)) ||
		!strings.Contains(stderr, "(not probed)") {
		t.Errorf("exit %d, stderr:\n%s\nwant 3, naming the port, not probed", code, stderr)
	}
	// One address refusing of two: the run goes on and the report shows it.
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "400", "-n", "40",
		"--resolve", f.Resolve("127.0.0.3"), f.URL())
	if code != exitOK || !strings.Contains(stderr, "(probed anyway)") {
		t.Fatalf("exit %d, stderr:\n%s\nwant 0 and the run probed anyway", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	checkFleet(t, f, rep, "127.0.0.3")
	if e := endpointByAddr(t, rep, "127.0.0.3"); e.Errors["connect_refused"] != e.Requests || e.Requests == 0 {
		t.Errorf("127.0.0.3: %d requests, errors %v; want every one refused", e.Requests, e.Errors)
	}
}

func TestResolveHints(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	port := int(f.Port())
	code, _, stderr := pinprobe(t, "-q", "-n", "4", "--resolve", fmt.Sprintf("app.test:%d:127.0.0.1", port+1),
		"--resolve", f.Resolve(), f.URL())
	if code != exitOK || strings.Contains(stderr, "warning") {
		t.Errorf("an unused extra --resolve of the same host warns: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = pinprobe(t, "-q", "-n", "4", "--resolve", fmt.Sprintf("nx.invalid:%d:127.0.0.1", port+1),
		fmt.Sprintf("http://nx.invalid:%d/", port))
	if code != exitNoAddress {
		t.Errorf("exit %d; want 3", code)
	}
	for _, w := range []string{fmt.Sprintf("warning: --resolve nx.invalid:%d is not used: the URL's port is %d", port+1, port),
		"--dns-server ADDR:PORT", "--resolve HOST:PORT:ADDR"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}
