package session

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"time"

	"pinprobe/probe"
	"pinprobe/report"
	"pinprobe/report/collect"
)

// dnsUpdate is one round of re-resolution: the addresses of every host:port
// the run probes, keyed like dnsKey.
type dnsUpdate struct {
	at    time.Time
	addrs map[string][]netip.Addr // dnsKey -> addresses; absent = resolution failed this round
}

func dnsKey(host string, port uint16) string { return probe.StaticKey(host, port) }

// watchDNS resolves every target again every interval and sends the answers
// that differ from the last ones. A failed resolution changes nothing: a DNS
// hiccup must not stop the probing of addresses that still work.
func watchDNS(ctx context.Context, r *probe.Resolver, targets []*probe.Target, initial []report.DNS, every time.Duration) <-chan dnsUpdate {
	out := make(chan dnsUpdate)
	last := map[string][]netip.Addr{}
	for _, d := range initial {
		for _, a := range d.Addresses {
			last[dnsKey(d.Host, d.Port)] = append(last[dnsKey(d.Host, d.Port)], netip.MustParseAddr(a))
		}
	}
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			u := dnsUpdate{at: time.Now(), addrs: map[string][]netip.Addr{}}
			changed := false
			seen := map[string]bool{}
			for _, t := range targets {
				k := dnsKey(t.Host(), t.Port())
				if seen[k] {
					continue
				}
				seen[k] = true
				res := r.Resolve(ctx, t.Host(), t.Port())
				if res.Err != nil {
					continue
				}
				u.addrs[k] = res.Addrs
				if !slices.Equal(res.Addrs, last[k]) {
					changed = true
					last[k] = res.Addrs
				}
			}
			if !changed {
				continue
			}
			select {
			case out <- u:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// dnsWatch applies DNS changes to a running probe. It runs on the collector
// goroutine, so the aggregator learns of an endpoint before its first result.
type dnsWatch struct {
	run     *probe.Run
	agg     *collect.Aggregator
	rep     *report.Report
	eps     []*probe.Endpoint
	targets []*probe.Target
	say     func(string, ...any)
}

func (w *dnsWatch) apply(u dnsUpdate) {
	// The change is dated when the streams change, here, not when DNS was
	// asked: "not probed after" must hold from that time on.
	u.at = time.Now()
	for i := range w.rep.DNS {
		d := &w.rep.DNS[i]
		k := dnsKey(d.Host, d.Port)
		now, ok := u.addrs[k]
		if !ok {
			continue
		}
		old := map[netip.Addr]bool{}
		for _, a := range d.Addresses {
			old[netip.MustParseAddr(a)] = true
		}
		cur := map[netip.Addr]bool{}
		var added, removed []string
		for _, a := range now {
			cur[a] = true
			if !old[a] {
				added = append(added, a.String())
				w.addEndpoints(d.Host, d.Port, a, u.at)
			}
		}
		for _, a := range d.Addresses {
			if !cur[netip.MustParseAddr(a)] {
				removed = append(removed, a)
				w.removeEndpoints(d.Host, d.Port, netip.MustParseAddr(a), u.at)
			}
		}
		if len(added) == 0 && len(removed) == 0 {
			continue
		}
		d.Error = "" // it resolves now
		d.Changes = append(d.Changes, report.DNSChange{At: report.Time{Time: u.at}, Added: nonNil(added), Removed: nonNil(removed)})
		d.Addresses = make([]string, len(now))
		for i, a := range now {
			d.Addresses[i] = a.String()
		}
		var what []string
		if len(added) > 0 {
			what = append(what, "added "+strings.Join(added, ", "))
		}
		if len(removed) > 0 {
			what = append(what, "removed "+strings.Join(removed, ", "))
		}
		w.say("DNS for %s changed: %s", d.Host, strings.Join(what, "; "))
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (w *dnsWatch) addEndpoints(host string, port uint16, a netip.Addr, at time.Time) {
	for _, t := range w.targets {
		if !strings.EqualFold(t.Host(), host) || t.Port() != port {
			continue
		}
		// An address that comes back gets its old endpoint back, so memory
		// stays flat however often DNS rotates; dns[].changes keeps the history.
		ep, known := w.endpoint(t, a)
		if !known {
			ep = &probe.Endpoint{ID: len(w.eps), Target: t, Addr: a}
		}
		if err := w.run.Add(ep); err != nil {
			if !errors.Is(err, probe.ErrRunEnded) {
				w.say("new address %s: %s", a, err)
			}
			continue
		}
		if !known {
			w.eps = append(w.eps, ep)
			w.agg.AddEndpoint(ep)
		}
		w.agg.MarkAdded(ep.ID, at)
	}
}

// endpoint returns the endpoint of target t at address a, if the run has one.
func (w *dnsWatch) endpoint(t *probe.Target, a netip.Addr) (*probe.Endpoint, bool) {
	for _, ep := range w.eps {
		if ep.Target == t && ep.Addr == a {
			return ep, true
		}
	}
	return nil, false
}

func (w *dnsWatch) removeEndpoints(host string, port uint16, a netip.Addr, at time.Time) {
	for _, ep := range w.eps {
		if ep.Addr == a && strings.EqualFold(ep.Target.Host(), host) && ep.Target.Port() == port {
			w.run.Remove(ep.ID)
			w.agg.MarkRemoved(ep.ID, at)
		}
	}
}
