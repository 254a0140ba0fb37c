package main

// Resolution: hosts that do not resolve, some targets that do not,
// --dns-server, --resolve and its hints, and IP-literal URLs.

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestNothingResolves: when no host resolves (NXDOMAIN, a --resolve for
// another port, -6 with IPv4 addresses only) there is nothing to probe: exit
// 3, stderr names the host and why, and the report on stdout says it too.
func TestNothingResolves(t *testing.T) {
	server := testserver.StartDNS(t, nil).Addr().String()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"NXDOMAIN from --dns-server", []string{"--dns-server", server, "http://nx.test:8080/"},
			[]string{"nx.test", "no such host", server}},
		{"--resolve for another port falls back to DNS",
			[]string{"--resolve", "nx.test:81:127.0.0.1", "--dns-server", server, "http://nx.test:80/"},
			[]string{"nx.test", "no such host"}},
		{"every target NXDOMAIN", []string{"--dns-server", server, "http://nx.test/", "https://other.invalid/"},
			[]string{"nx.test", "other.invalid"}},
		{"-6 with only IPv4 addresses", []string{"-6", "--resolve", "app.test:80:127.0.0.1", "http://app.test/"},
			[]string{"app.test", "ipv6", "127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-q", "--requests", "1"}, tt.args...)
			code, stdout, stderr := pinprobe(t, args...)
			if code != exitNoAddress {
				t.Errorf("exit %d; want %d; stderr:\n%s", code, exitNoAddress, stderr)
			}
			// The report is written all the same, and says why.
			if !strings.Contains(strings.Join(strings.Fields(stdout), " "), "VERDICT NO-DATA nothing was probed: no address for any target") {
				t.Errorf("stdout does not report that nothing was probed:\n%s", stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, stderr)
				}
			}
			if !strings.Contains(stderr, "nothing to probe") {
				t.Errorf("stderr does not say there is nothing to probe:\n%s", stderr)
			}
		})
	}
}

// TestSomeTargetsUnresolvable: a target that does not resolve is reported
// and the others are probed.
func TestSomeTargetsUnresolvable(t *testing.T) {
	f := testserver.StartFleet(t, testserver.FleetOptions{Host: "good.test"}, testserver.Lo4a, testserver.Lo6)
	server := testserver.StartDNS(t, map[string][]netip.Addr{"good.test": {testserver.Lo4a, testserver.Lo6}}).Addr().String()
	bad := fmt.Sprintf("http://nx.test:%d/", f.Port())
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "200", "--requests", "20",
		"--dns-server", server, f.URL(), bad)
	if code != exitOK {
		t.Fatalf("exit %d; want %d; stderr:\n%s", code, exitOK, stderr)
	}
	if !strings.Contains(stderr, "nx.test") || !strings.Contains(stderr, "no such host") {
		t.Errorf("stderr does not say nx.test did not resolve:\n%s", stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if got := endpointAddrs(rep); !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Errorf("endpoints %v; want 127.0.0.1 and ::1 of good.test only", got)
	}
	for _, e := range rep.Endpoints {
		if e.Host != "good.test" {
			t.Errorf("endpoint %s has host %q; want good.test", e.Address, e.Host)
		}
	}
	if rep.Totals.Requests != 20 || rep.Totals.Failed != 0 {
		t.Errorf("totals: %d requests, %d failed; want 20, 0", rep.Totals.Requests, rep.Totals.Failed)
	}
	checkFleet(t, f, rep)

	if len(rep.DNS) != 2 {
		t.Fatalf("dns has %d entries; want 2: %+v", len(rep.DNS), rep.DNS)
	}
	good, nx := rep.DNS[0], rep.DNS[1]
	if good.Host != "good.test" || good.Source != "dns "+server || !slices.Equal(good.Addresses, []string{"127.0.0.1", "::1"}) || good.Error != "" {
		t.Errorf("dns[0] = %+v; want good.test from %q with 127.0.0.1, ::1", good, "dns "+server)
	}
	if nx.Host != "nx.test" || len(nx.Addresses) != 0 || !strings.Contains(nx.Error, "no such host") {
		t.Errorf("dns[1] = %+v; want nx.test with no addresses and a no such host error", nx)
	}
}

// TestResolveHints: a --resolve for the right host but another port warns
// only when the host is not otherwise resolved, and a failed resolution
// suggests --dns-server and --resolve.
func TestResolveHints(t *testing.T) {
	t.Parallel()
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

// TestIPLiteralURLs: an IP-literal URL is one endpoint, resolved by nobody.
func TestIPLiteralURLs(t *testing.T) {
	// One fleet per literal, each expecting the Host header of its URL.
	f4 := testserver.StartFleet(t, testserver.FleetOptions{Host: "127.0.0.1"}, testserver.Lo4a)
	f6 := testserver.StartFleet(t, testserver.FleetOptions{Host: "::1"}, testserver.Lo6)
	u4, u6 := f4.URL(), f6.URL()
	if u4 != fmt.Sprintf("http://127.0.0.1:%d/", f4.Port()) || u6 != fmt.Sprintf("http://[::1]:%d/", f6.Port()) {
		t.Fatalf("fleet URLs %s, %s; want IP-literal URLs", u4, u6)
	}
	rep, _, _ := probeReport(t, "--rate", "200", "--requests", "20", u4, u6)
	if got := endpointAddrs(rep); !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Fatalf("endpoints %v; want one per literal: 127.0.0.1, ::1", got)
	}
	for i, want := range []string{u4, u6} {
		if e := rep.Endpoints[i]; e.Target != want || e.Host != strings.Trim(e.Address, "[]") {
			t.Errorf("endpoint %d: target %q host %q; want %q and its address", i, e.Target, e.Host, want)
		}
	}
	for _, d := range rep.DNS {
		if d.Source != "literal" || len(d.Addresses) != 1 || d.Addresses[0] != d.Host {
			t.Errorf("dns %+v; want source literal with the host itself", d)
		}
	}
	checkFleet(t, f4, rep, "::1")
	checkFleet(t, f6, rep, "127.0.0.1")
}
