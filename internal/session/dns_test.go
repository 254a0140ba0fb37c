package session

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/testserver"
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

// clockDNS answers lookups from addrs, or, while silent, never: a lookup
// then ends only when its context does, as one to a server that drops the
// queries.
type clockDNS struct {
	mu     sync.Mutex
	addrs  []netip.Addr
	silent bool
}

func (d *clockDNS) set(silent bool, addrs ...netip.Addr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.silent, d.addrs = silent, addrs
}

func (d *clockDNS) Resolve(ctx context.Context, host string, port uint16) probe.Resolution {
	d.mu.Lock()
	silent, addrs := d.silent, slices.Clone(d.addrs)
	d.mu.Unlock()
	res := probe.Resolution{Host: host, Port: port, Source: "dns"}
	if silent {
		<-ctx.Done()
		res.Err = fmt.Errorf("resolve %s (dns): %w", host, errors.New("timed out"))
		return res
	}
	res.Addrs = addrs
	return res
}

// TestClockReResolveLooks: re-resolution on the clock of a synctest
// bubble. Every 200 ms a look; a DNS server silent from 500 ms to 1.3 s
// costs the four looks that start while it is silent, each ended by the
// next look's time (600, 800, 1000 and 1200 ms), never more; the next look
// (1.4 s) sees the address it answers with; no look is skipped or doubled.
func TestClockReResolveLooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lo4a, lo4b := testserver.Lo4a, testserver.Lo4b
		d := &clockDNS{addrs: []netip.Addr{lo4a}}
		ctx, cancel := context.WithTimeout(t.Context(), 2900*time.Millisecond)
		defer cancel()
		start := time.Now()
		time.AfterFunc(500*time.Millisecond, func() { d.set(true) })
		time.AfterFunc(1300*time.Millisecond, func() { d.set(false, lo4a, lo4b) })
		const every = 200 * time.Millisecond
		key := dnsKey("dyn.test", 80)
		var got []string
		for u := range updates(ctx, lookEvery(ctx, d, []hostPort{{"dyn.test", 80}}, every)) {
			at := u.at.Sub(start)
			switch why, missed := u.missed[key]; {
			case missed:
				got = append(got, fmt.Sprintf("%v missed: %s", at, why))
			default:
				got = append(got, fmt.Sprintf("%v %v", at, u.addrs[key]))
			}
		}
		a, ab := fmt.Sprint([]netip.Addr{lo4a}), fmt.Sprint([]netip.Addr{lo4a, lo4b})
		want := []string{"200ms " + a, "400ms " + a,
			"600ms missed: timed out", "800ms missed: timed out", "1s missed: timed out", "1.2s missed: timed out"}
		for at := 1400 * time.Millisecond; at < 2900*time.Millisecond; at += every {
			want = append(want, fmt.Sprintf("%v %s", at, ab))
		}
		if !slices.Equal(got, want) {
			t.Errorf("looks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// updates passes on the looks of ch until ctx ends.
func updates(ctx context.Context, ch <-chan dnsUpdate) <-chan dnsUpdate {
	out := make(chan dnsUpdate)
	go func() {
		defer close(out)
		for {
			select {
			case u := <-ch:
				out <- u
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
