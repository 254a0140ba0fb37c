package session

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// dnsUpdate is one look of re-resolution: the addresses of every host:port
// the run probes, keyed like dnsKey, and why the hosts that got no answer
// in time got none.
type dnsUpdate struct {
	at     time.Time
	addrs  map[string][]netip.Addr // dnsKey -> addresses; absent = no answer this look
	missed map[string]string       // dnsKey -> why it got no answer: "timed out", …
}

func dnsKey(host string, port uint16) string { return probe.StaticKey(host, port) }

// followDNS resolves every target whose addresses come from DNS again every
// interval, each host on its own
// and every lookup bounded by the interval, and sends what each look saw.
// So a DNS server that stops answering costs the looks it does not answer,
// no more: the next look starts on time and sees a change as soon as the
// server answers again, where a lookup of the resolver's own timeout (5s)
// would have blinded several looks at once. A look that got no answer
// changes nothing (a DNS hiccup must not stop the probing of addresses that
// still work); it is counted as missed (see dnsFollower.apply).
func followDNS(ctx context.Context, r *probe.Resolver, targets []*probe.Target, every time.Duration) <-chan dnsUpdate {
	keys := slices.DeleteFunc(hostPorts(targets), func(k hostPort) bool { return !r.FromDNS(k.host, k.port) })
	return lookEvery(ctx, r, keys, every)
}

// lookEvery resolves keys with r every interval, each look bounded by the
// interval, and sends what each look saw, until ctx ends.
func lookEvery(ctx context.Context, r resolver, keys []hostPort, every time.Duration) <-chan dnsUpdate {
	out := make(chan dnsUpdate)
	if len(keys) == 0 {
		return out // nothing can change: no look to make
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
			at := time.Now()
			look, cancel := context.WithTimeout(ctx, every)
			res := resolveAll(look, r, keys)
			cancel()
			if ctx.Err() != nil {
				return // the run ended during the look: nothing was missed
			}
			u := dnsUpdate{at: at, addrs: map[string][]netip.Addr{}, missed: map[string]string{}}
			for i, k := range keys {
				if err := res[i].Err; err != nil {
					u.missed[dnsKey(k.host, k.port)] = cause(err)
					continue
				}
				u.addrs[dnsKey(k.host, k.port)] = res[i].Addrs
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

// cause is why a resolution failed, without the host and source its
// error names ("resolve HOST (SOURCE): timed out").
func cause(err error) string {
	if c := errors.Unwrap(err); c != nil {
		return c.Error()
	}
	msg := err.Error() // "no addresses", "no ipv6 address among …"
	if _, after, ok := strings.Cut(msg, "): "); ok {
		return after
	}
	return msg
}

// endpointBook is told of the endpoints DNS adds and removes: the run's
// *collect.Aggregator, or a watch's sink (watchBook).
type endpointBook interface {
	AddEndpoint(ep *probe.Endpoint)
	MarkAdded(id int, at time.Time)
	MarkRemoved(id int, at time.Time)
}

// dnsFollower applies DNS changes to a running probe. It runs on the collector
// goroutine, so the aggregator learns of an endpoint before its first result.
type dnsFollower struct {
	run     engine
	agg     endpointBook
	rep     *report.Report
	eps     []*probe.Endpoint
	targets []*probe.Target
	say     func(string, ...any)
	silent  map[string]bool // dnsKey -> its last look got no answer
}

func (w *dnsFollower) apply(u dnsUpdate) {
	looked := u.at
	// The change is dated when the streams change, here, not when DNS was
	// asked: "not probed after" must hold from that time on.
	u.at = time.Now()
	for i := range w.rep.DNS {
		d := &w.rep.DNS[i]
		k := dnsKey(d.Host, d.Port)
		why, missed := u.missed[k]
		now, ok := u.addrs[k]
		if !ok && !missed {
			continue
		}
		d.Looks++
		if missed {
			if !w.silent[k] {
				w.say("re-resolving %s got no addresses: %s; a change of them goes unseen until it answers", d.Host, why)
			}
			w.silent[k] = true
			if d.Missed == nil {
				d.Missed = &report.DNSMissed{First: report.Time{Time: looked}}
			}
			d.Missed.Looks++
			d.Missed.Last, d.Missed.Error = report.Time{Time: looked}, why
			continue
		}
		if w.silent[k] {
			w.silent[k] = false
			w.say("re-resolving %s answers again", d.Host)
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

func (w *dnsFollower) addEndpoints(host string, port uint16, a netip.Addr, at time.Time) {
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
func (w *dnsFollower) endpoint(t *probe.Target, a netip.Addr) (*probe.Endpoint, bool) {
	for _, ep := range w.eps {
		if ep.Target == t && ep.Addr == a {
			return ep, true
		}
	}
	return nil, false
}

func (w *dnsFollower) removeEndpoints(host string, port uint16, a netip.Addr, at time.Time) {
	for _, ep := range w.eps {
		if ep.Addr == a && strings.EqualFold(ep.Target.Host(), host) && ep.Target.Port() == port {
			w.run.Remove(ep.ID)
			w.agg.MarkRemoved(ep.ID, at)
		}
	}
}
