package session

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
	"github.com/pinprobe/pinprobe/probe"
)

// TestReResolveMissesOnlyWhatItMisses: a DNS server that stops answering
// for a while costs the looks of --re-resolve it does not answer, each
// bounded by the interval, and no more: the change it answers with when it
// comes back is seen within a look or two, where a lookup bounded only by
// the resolver's 5s would have blinded the run past its end. The looks that
// got nothing are in the report (dns[].looks, dns[].missed) and said once
// on the log, with the moment the server answers again.
func TestReResolveMissesOnlyWhatItMisses(t *testing.T) {
	t.Parallel()
	const host = "dyn.test"
	lo4a, lo4b := testserver.Lo4a, testserver.Lo4b
	f := testserver.StartFleet(t, testserver.FleetOptions{Host: host}, lo4a, lo4b)
	d := testserver.StartDNS(t, map[string][]netip.Addr{host: {lo4a}})
	tg, err := probe.ParseTarget(f.URL())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	every := 200 * time.Millisecond
	cfg := Config{
		Targets:   []*probe.Target{tg},
		Resolver:  &probe.Resolver{Server: d.Addr()},
		Engine:    probe.Options{Rate: 40, Duration: 3 * time.Second, ConnOptions: probe.ConnOptions{Timeout: time.Second}},
		Interval:  time.Second,
		ReResolve: every,
		Log: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf(format, args...))
		},
	}
	s, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	const silentAt, backAt = 500 * time.Millisecond, 1200 * time.Millisecond
	start := time.Now()
	time.AfterFunc(silentAt, func() { d.Silence(host) })
	time.AfterFunc(backAt, func() { d.Set(host, lo4a, lo4b) }) // answers again, with a new address
	rep, err := s.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dns := rep.DNS[0]
	if len(dns.Changes) != 1 || !slices.Equal(dns.Changes[0].Added, []string{lo4b.String()}) {
		t.Fatalf("dns changes %+v; want %s added", dns.Changes, lo4b)
	}
	// Answered at backAt, seen by the look after it: a look or two, and
	// the slack of a loaded machine.
	if seen := dns.Changes[0].At.Sub(start); seen > backAt+2*every+500*time.Millisecond {
		t.Errorf("the change answered %v into the run was seen %v into it; want within a look or two", backAt, seen)
	}
	m := dns.Missed
	if m == nil {
		t.Fatalf("dns %+v: no missed looks; want those of the %v of silence", dns, backAt-silentAt)
	}
	if m.Looks < 1 || m.Looks > int64((backAt-silentAt)/every)+1 || m.Error != "timed out" ||
		m.First.Sub(start) < silentAt-every || m.Last.Sub(start) > backAt+every {
		t.Errorf("missed %d looks, %v to %v into the run, %q; want those from %v to %v, timed out",
			m.Looks, m.First.Sub(start), m.Last.Sub(start), m.Error, silentAt, backAt)
	}
	if most := int64(cfg.Engine.Duration / every); dns.Looks < most/2 || dns.Looks > most || dns.Looks <= m.Looks {
		t.Errorf("%d looks, %d missed; want about %d, one every %v", dns.Looks, m.Looks, most, every)
	}
	mu.Lock()
	log := strings.Join(lines, "\n")
	mu.Unlock()
	if strings.Count(log, "got no addresses: timed out") != 1 || strings.Count(log, "answers again") != 1 {
		t.Errorf("log:\n%s\nwant one line when the looks start missing and one when they answer again", log)
	}
}
