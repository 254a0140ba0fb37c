package detect

import (
	"math"
	"time"
)

// Params tune a Detector; Default is what a watch uses.
type Params struct {
	// Floor is the least baseline failure rate assumed: a fleet that never
	// fails must not make one failure a suspect.
	Floor float64
	// Ratio is the failure rate a suspect is tested for, as a multiple of
	// the baseline (at most Cap).
	Ratio, Cap float64
	// H and HEnd are the thresholds that start and end a suspect.
	H, HEnd float64
	// HalfLife is the half-life of the baseline's and the scopes' counts.
	HalfLife time.Duration
	// Outage0 and Outage1 are the failure rates an address's absolute
	// detector tells apart; HOutage its threshold.
	Outage0, Outage1, HOutage float64
	// Evidence is how many failed request IDs a suspect keeps.
	Evidence int
}

// Default are the watch's parameters; docs/watch.md gives their false
// alarms and delays.
var Default = Params{
	Floor: 0.01, Ratio: 4, Cap: 0.9, H: 10, HEnd: 8, HalfLife: 10 * time.Minute,
	Outage0: 0.05, Outage1: 0.5, HOutage: 10, Evidence: 5,
}

// Scope is what a suspect names. Kind is "address", "family", "instance",
// "connections" (an address's connections: ObserveRepeat) or "outage";
// the fields it does not use are "".
type Scope struct {
	Host     string
	Kind     string
	Address  string
	Family   string
	Instance string
}

// Event is the start or the end of a suspect.
type Event struct {
	Start bool
	Scope Scope
	// At is when its failures started (a start) or stopped (an end): the
	// CUSUM's change point, not the moment it was detected.
	At         time.Time
	DetectedAt time.Time
	// Requests and Failures are the scope's since the change point;
	// Baseline is the rest's failure rate it was tested against (the
	// rest's, smoothed, at least Params.Floor), RestRequests and
	// RestFailures the rest's counts (decayed by HalfLife).
	Requests, Failures         int64
	Baseline                   float64
	RestRequests, RestFailures float64
	// IDs are the request IDs of its latest failures (at most
	// Params.Evidence), to look up in the gateway's log.
	IDs []string
}

// Suspect is a suspect that lasts.
type Suspect struct {
	Scope Scope
	Since time.Time
}

// Observation is one request's outcome, and the scopes it belongs to.
type Observation struct {
	Host   string
	Scopes []Scope // Kind "address", "family", "instance"
	Failed bool
	At     time.Time
	ID     string
}

// Detector runs the CUSUMs of every scope. It is not safe for concurrent
// use: the watch feeds it from one goroutine.
type Detector struct {
	p      Params
	hosts  map[string]*host
	decay  float64 // per second
	lastAt time.Time
}

type host struct {
	n, f   float64 // decayed counts of all its requests
	scopes map[Scope]*scope
	abs    map[string]*cusum // address -> absolute detector
	outage *Suspect
}

type scope struct {
	n, f float64 // decayed counts
	c    cusum
	// ok counts, for a connections scope, its address's successes since
	// its CUSUM last left zero: failures that follow connections leave
	// other connections succeeding meanwhile; an address failing whole
	// does not.
	ok int64
}

// cusum is one scope's start and end statistics.
type cusum struct {
	start    walk // toward a start, while not active
	active   bool
	since    time.Time
	end      walk  // toward the end, while active
	aN, aF   int64 // while active
	ids      []string
	baseline float64
}

// walk is one CUSUM: its sum, and the requests and failures since it
// last left zero, at from.
type walk struct {
	s    float64
	from time.Time
	n, f int64
}

// add counts one request whose log-likelihood ratio is llr.
func (w *walk) add(at time.Time, fail bool, llr float64) {
	if w.s == 0 {
		w.from, w.n, w.f = at, 0, 0
	}
	w.s = max(0, w.s+llr)
	w.n++
	if fail {
		w.f++
	}
}

// New is a detector with parameters p.
func New(p Params) *Detector {
	return &Detector{p: p, hosts: map[string]*host{}, decay: math.Exp2(-1 / p.HalfLife.Seconds())}
}

func (d *Detector) host(name string) *host {
	h := d.hosts[name]
	if h == nil {
		h = &host{scopes: map[Scope]*scope{}, abs: map[string]*cusum{}}
		d.hosts[name] = h
	}
	return h
}

// Observe counts one request and returns the suspects it starts or ends.
func (d *Detector) Observe(o Observation) []Event {
	h := d.host(o.Host)
	fail := 0.0
	if o.Failed {
		fail = 1
	}
	var evs []Event
	for _, sc := range o.Scopes {
		s := h.scopes[sc]
		if s == nil {
			s = &scope{}
			h.scopes[sc] = s
		}
		// The baseline is the rest of the host, before this request.
		// A scope with no rest (the one address, or family, of its host)
		// has nothing to stand out from: only an outage can name it.
		rn, rf := h.n-s.n, h.f-s.f
		p0 := max(d.p.Floor, (rf+0.5)/(rn+1))
		p1 := min(d.p.Ratio*p0, d.p.Cap)
		if rn >= 1 && p1 > p0 {
			if ev, ok := s.c.step(o, p0, p1, d.p.H, d.p.HEnd, d.p.Evidence); ok {
				ev.Scope, ev.RestRequests, ev.RestFailures = sc, rn, rf
				if ev.Start && sc.Kind == "family" && h.oneAddress(sc.Family) {
					s.c.active, s.c.start.s = false, 0 // an address of it is the suspect, not the family
					continue
				}
				evs = append(evs, ev)
			}
		}
		s.n++
		s.f += fail
		if sc.Kind == "address" && !o.Failed {
			if cs := h.scopes[Scope{Host: sc.Host, Kind: "connections", Address: sc.Address, Family: sc.Family}]; cs != nil {
				cs.ok++
			}
		}
		if sc.Kind == "address" {
			a := h.abs[sc.Address]
			if a == nil {
				a = &cusum{}
				h.abs[sc.Address] = a
			}
			a.step(o, d.p.Outage0, d.p.Outage1, d.p.HOutage, d.p.HOutage, d.p.Evidence)
		}
	}
	h.n++
	h.f += fail
	if ev, ok := d.outage(o.Host, h, o.At); ok {
		evs = append(evs, ev)
	}
	return evs
}

// oneAddress says whether family's failures are one address's (or a
// few's): some address of it is a suspect and another is not.
func (h *host) oneAddress(family string) bool {
	var on, off bool
	for sc, s := range h.scopes {
		if sc.Kind == "address" && sc.Family == family {
			on = on || s.c.active
			off = off || !s.c.active
		}
	}
	return on && off
}

// ObserveRepeat counts a request sent on a connection whose previous
// request failed, for its address's connections scope: failures that
// repeat on their connection more often than the address's failure rate
// predicts are what a failing instance behind a layer-4 balancer shows
// (each connection stays on one instance). The scope is tested against
// the address's own rate (floored), so an address that fails alike on
// every connection, or an outage, never makes it a suspect. Call it after
// Observe of the same request.
func (d *Detector) ObserveRepeat(o Observation, address, family string) []Event {
	h := d.host(o.Host)
	a := h.scopes[Scope{Host: o.Host, Kind: "address", Address: address, Family: family}]
	if a == nil || a.n < 1 {
		return nil
	}
	sc := Scope{Host: o.Host, Kind: "connections", Address: address, Family: family}
	s := h.scopes[sc]
	if s == nil {
		s = &scope{}
		h.scopes[sc] = s
	}
	p0 := max(d.p.Floor, a.f/a.n)
	p1 := min(d.p.Ratio*p0, d.p.Cap)
	if p1 <= p0 {
		return nil
	}
	if !s.c.active && s.c.start.s == 0 {
		s.ok = 0 // the CUSUM leaves zero now: count the successes from here
	}
	ev, ok := s.c.step(o, p0, p1, d.p.H, d.p.HEnd, d.p.Evidence)
	if !ok {
		return nil
	}
	if ev.Start && s.ok < minOtherOK {
		s.c.active, s.c.start.s = false, 0 // the whole address fails: its suspect says so
		return nil
	}
	ev.Scope = sc
	return []Event{ev}
}

// minOtherOK is how many successes of its address a connections suspect
// needs meanwhile to start.
const minOtherOK = 3

// outage starts an outage of h when every address's absolute detector is
// raised, and ends it when one of them is not.
func (d *Detector) outage(name string, h *host, at time.Time) (Event, bool) {
	all := len(h.abs) > 0
	since := time.Time{}
	var ids []string
	var n, f int64
	for _, a := range h.abs {
		all = all && a.active
		if a.active && (since.IsZero() || a.since.After(since)) {
			since = a.since // the outage starts when the last address began failing
		}
		if a.active {
			ids = append(ids, a.ids...)
			n, f = n+a.aN, f+a.aF
		}
	}
	sc := Scope{Host: name, Kind: "outage"}
	switch {
	case all && h.outage == nil:
		h.outage = &Suspect{Scope: sc, Since: since}
		return Event{Start: true, Scope: sc, At: since, DetectedAt: at, Requests: n, Failures: f, IDs: last(ids, d.p.Evidence)}, true
	case !all && h.outage != nil:
		h.outage = nil
		return Event{Scope: sc, At: at, DetectedAt: at}, true
	}
	return Event{}, false
}

func last(ids []string, n int) []string {
	if len(ids) > n {
		return ids[len(ids)-n:]
	}
	return ids
}

// step adds one request to the CUSUMs of a scope tested for p1 against
// p0, and says when a suspect starts or ends.
func (c *cusum) step(o Observation, p0, p1, h, hEnd float64, keep int) (Event, bool) {
	fail := o.Failed
	if fail && o.ID != "" {
		c.ids = append(c.ids, o.ID)
		if len(c.ids) > keep {
			c.ids = c.ids[1:]
		}
	}
	if !c.active {
		if c.start.s == 0 && !fail {
			c.ids = c.ids[:0]
		}
		c.start.add(o.At, fail, llr(fail, p0, p1))
		if c.start.s < h {
			return Event{}, false
		}
		c.active, c.since, c.end.s, c.baseline = true, c.start.from, 0, p0
		c.aN, c.aF = c.start.n, c.start.f
		return Event{Start: true, At: c.start.from, DetectedAt: o.At, Requests: c.start.n, Failures: c.start.f, Baseline: p0, IDs: append([]string(nil), c.ids...)}, true
	}
	c.aN++
	if fail {
		c.aF++
	}
	// The end: "fails like the rest" (p0) against "fails as it did while
	// suspect" (at least p1).
	pa := min(max(float64(c.aF)/float64(c.aN), p1), 0.95)
	c.end.add(o.At, fail, llr(fail, pa, p0))
	if c.end.s < hEnd {
		return Event{}, false
	}
	ev := Event{At: c.end.from, DetectedAt: o.At, Requests: c.end.n, Failures: c.end.f, Baseline: p0}
	c.active, c.start.s, c.ids = false, 0, c.ids[:0]
	return ev, true
}

// llr is the log-likelihood ratio of one request's outcome, failure rate
// p1 against p0.
func llr(fail bool, p0, p1 float64) float64 {
	if fail {
		return math.Log(p1 / p0)
	}
	return math.Log((1 - p1) / (1 - p0))
}

// Decay ages every count to at: a baseline follows the fleet as it
// changes, and an old failure weighs less than a new one.
func (d *Detector) Decay(at time.Time) {
	if d.lastAt.IsZero() || !at.After(d.lastAt) {
		d.lastAt = at
		return
	}
	k := math.Pow(d.decay, at.Sub(d.lastAt).Seconds())
	d.lastAt = at
	for _, h := range d.hosts {
		h.n *= k
		h.f *= k
		for _, s := range h.scopes {
			s.n *= k
			s.f *= k
		}
	}
}

// Forget drops the scopes of an address that left DNS (and its absolute
// detector), or of an instance no longer seen, with their counts; a
// suspect of them ends without an event (the watch retires its series).
func (d *Detector) Forget(sc Scope) {
	h := d.hosts[sc.Host]
	if h == nil {
		return
	}
	delete(h.scopes, sc) // its requests stay in the host's counts, to decay
	if sc.Kind == "address" {
		delete(h.abs, sc.Address)
		delete(h.scopes, Scope{Host: sc.Host, Kind: "connections", Address: sc.Address, Family: sc.Family})
	}
}

// Suspects are the suspects that last now, outages too.
func (d *Detector) Suspects() []Suspect {
	var out []Suspect
	for _, h := range d.hosts {
		for sc, s := range h.scopes {
			if s.c.active {
				out = append(out, Suspect{Scope: sc, Since: s.c.since})
			}
		}
		if h.outage != nil {
			out = append(out, *h.outage)
		}
	}
	return out
}
