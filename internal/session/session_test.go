package session

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/probe"
)

// TestPlanLineNamesAFewAddresses: the plan line printed before the load
// names at most planListMax addresses per host and hosts, then how many
// more: 200 addresses made it a 3,000-character line.
func TestPlanLineNamesAFewAddresses(t *testing.T) {
	target := func(raw string) *probe.Target {
		tg, err := probe.ParseTarget(raw)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	many := &Session{}
	tg := target("http://many.test:8080/")
	for i := 1; i <= 200; i++ {
		many.Endpoints = append(many.Endpoints, &probe.Endpoint{ID: i - 1, Target: tg, Addr: netip.MustParseAddr(fmt.Sprintf("127.0.0.%d", i))})
	}
	want := "200 endpoints of many.test: 127.0.0.1, 127.0.0.2, 127.0.0.3, 127.0.0.4, 127.0.0.5, 127.0.0.6, 127.0.0.7, 193 more"
	if got := many.String(); got != want {
		t.Errorf("200 addresses:\n got %s\nwant %s", got, want)
	}
	few := &Session{}
	for i, a := range []string{"127.0.0.1", "::1"} {
		few.Endpoints = append(few.Endpoints, &probe.Endpoint{ID: i, Target: tg, Addr: netip.MustParseAddr(a)})
	}
	if got, want := few.String(), "2 endpoints of many.test: 127.0.0.1, ::1"; got != want {
		t.Errorf("two addresses: got %q; want %q", got, want)
	}
	hosts := &Session{}
	for i := range 10 {
		hosts.Endpoints = append(hosts.Endpoints, &probe.Endpoint{ID: i, Target: target(fmt.Sprintf("http://h%d.test/", i)), Addr: netip.MustParseAddr("127.0.0.1")})
	}
	got := hosts.String()
	if !strings.HasPrefix(got, "10 endpoints: h0.test (127.0.0.1), ") || !strings.HasSuffix(got, "h6.test (127.0.0.1), 3 more") {
		t.Errorf("10 hosts: %q", got)
	}
}
