package collect

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// Live holds running counts that another goroutine (the progress display)
// may read while the collector writes them.
type Live struct {
	Requests, Failed, Dropped atomic.Int64
	ClientErrors              atomic.Int64 // requests this machine could not send
	FamilyRequests            map[probe.Family]*atomic.Int64
	FamilyFailed              map[probe.Family]*atomic.Int64
	// Latency is the rate and latency of the last seconds.
	Latency LiveLatency

	mu        sync.Mutex
	endpoints []*LiveEndpoint
}

// LiveEndpoint is one endpoint's running counts.
type LiveEndpoint struct {
	Endpoint         *probe.Endpoint
	Requests, Failed atomic.Int64
}

// Endpoints returns every endpoint's running counts, in endpoint order.
func (l *Live) Endpoints() []*LiveEndpoint {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*LiveEndpoint(nil), l.endpoints...)
}

// Aggregator tallies results per endpoint. Call Add from one goroutine, then Close.
type Aggregator struct {
	eps      []*probe.Endpoint
	addrs    []string // the endpoints' addresses, written once, not per result
	per      []*report.Tally
	forensic []*forensics
	live     *Live
	timeline timeline
	prints   fingerprints
	client   clientSeen
	cl       cleaner  // what came from the network, made safe where it enters
	groupBy  []string // the headers of probe.Result.Groups, in order
	groups   report.GroupTally
	// clientErr is the first client-side error, to name its cause.
	clientErr string
	pauses    []pause
	// ids are each endpoint's request IDs counted (TrackIDs); nil when
	// the report counts every request of its run.
	ids []idRanges
}

// pause is a stretch in which pinprobe did not run, as the endpoints'
// schedulers saw it: each reports its own requests of the one stall, over
// about the same stretch, and they add up to one.
type pause struct {
	from, to time.Time
	requests int64
}

// addPause counts a pause an endpoint's scheduler reported with the one
// it overlaps, or as a new one; past report.MaxPauses, with the last.
func (a *Aggregator) addPause(r *probe.Result) {
	p := pause{from: r.Start, to: r.Start.Add(r.Paused), requests: int64(r.Missed)}
	for i := range a.pauses {
		q := &a.pauses[i]
		if p.from.After(q.to) || p.to.Before(q.from) {
			continue
		}
		q.from, q.to, q.requests = minTime(q.from, p.from), maxTime(q.to, p.to), q.requests+p.requests
		return
	}
	if n := len(a.pauses); n == report.MaxPauses {
		q := &a.pauses[n-1]
		q.to, q.requests = maxTime(q.to, p.to), q.requests+p.requests
		return
	}
	a.pauses = append(a.pauses, p)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// NewAggregator returns an Aggregator for eps, whose IDs must be their indexes.
func NewAggregator(eps []*probe.Endpoint) *Aggregator {
	a := &Aggregator{live: &Live{
		FamilyRequests: map[probe.Family]*atomic.Int64{probe.IPv4: {}, probe.IPv6: {}},
		FamilyFailed:   map[probe.Family]*atomic.Int64{probe.IPv4: {}, probe.IPv6: {}},
	}}
	a.timeline.auto = true
	a.timeline.interval = time.Second
	for _, ep := range eps {
		a.AddEndpoint(ep)
	}
	return a
}

// SetTimeline fixes the timeline's origin and bucket width. With auto set,
// the width doubles whenever the series would pass maxPoints.
func (a *Aggregator) SetTimeline(start time.Time, interval time.Duration, auto bool) {
	a.timeline.start = start
	a.timeline.interval = max(interval, time.Millisecond)
	a.timeline.auto = auto
}

// AddEndpoint tallies a new endpoint, found while the run goes on; its ID
// must be the number of endpoints before it.
func (a *Aggregator) AddEndpoint(ep *probe.Endpoint) {
	a.eps = append(a.eps, ep)
	a.addrs = append(a.addrs, ep.Addr.String())
	a.live.mu.Lock()
	a.live.endpoints = append(a.live.endpoints, &LiveEndpoint{Endpoint: ep})
	a.live.mu.Unlock()
	a.per = append(a.per, report.NewTally())
	if a.ids != nil {
		a.ids = append(a.ids, nil)
	}
	a.forensic = append(a.forensic, newForensics())
	a.timeline.addEndpoint()
}

// MarkRemoved records that endpoint id's address vanished from DNS at t.
func (a *Aggregator) MarkRemoved(id int, t time.Time) {
	f := a.forensic[id]
	f.removed = t
	f.history = append(f.history, report.DNSEvent{At: report.Time{Time: t}, Event: "removed"})
}

// MarkAdded records that endpoint id's address appeared in DNS at t: for
// the first time when it was not in the first answer, or again when it had
// vanished (the endpoint is probed once more).
func (a *Aggregator) MarkAdded(id int, t time.Time) {
	f := a.forensic[id]
	if f.removed.IsZero() {
		f.added = t
		return
	}
	f.removed = time.Time{}
	f.history = append(f.history, report.DNSEvent{At: report.Time{Time: t}, Event: "returned"})
}

// Live returns the running counts, safe to read concurrently with Add.
func (a *Aggregator) Live() *Live { return a.live }

// Add counts one result.
func (a *Aggregator) Add(r probe.Result) {
	t := a.per[r.Endpoint]
	if r.Missed > 0 {
		a.addPause(&r)
		return
	}
	if r.Dropped > 0 {
		t.Dropped += int64(r.Dropped)
		a.live.Dropped.Add(int64(r.Dropped))
		return
	}
	if r.Abandoned > 0 {
		// Sent, and not waited for: no outcome to count, and never a
		// failure; counted apart so that nothing sent goes missing.
		t.Abandoned += int64(r.Abandoned)
		return
	}
	if r.Class == probe.ClassClient {
		// The client's own trouble (out of descriptors or ports): not a
		// request the backend saw, so not in requests, and never a failure.
		t.ClientErrors++
		a.live.ClientErrors.Add(1)
		if a.clientErr == "" && r.Err != nil {
			a.clientErr = r.Err.Error()
		}
		return
	}
	fam := a.eps[r.Endpoint].Family()
	failed := r.Failed // the engine decided it (report.FailStatus.Failed)
	if a.ids != nil {
		if n := seqOf(r.RequestID); n > 0 {
			a.ids[r.Endpoint].add(n)
		}
	}
	a.live.Requests.Add(1)
	a.live.FamilyRequests[fam].Add(1)
	le := a.live.endpoints[r.Endpoint] // the collector's own list: no lock to read it
	le.Requests.Add(1)
	a.live.Latency.add(r.Start.Add(r.Latency), r.Latency)
	o := outcomeOf(&r, failed)
	t.Record(o)
	if failed {
		a.live.Failed.Add(1)
		a.live.FamilyFailed[fam].Add(1)
		le.Failed.Add(1)
	}

	a.forensic[r.Endpoint].add(&r, failed, &a.cl)
	addr := a.addrs[r.Endpoint]
	bucket := a.timeline.add(r.Endpoint, fam, r.Start, failed, r.Latency)
	if o.Class == "" {
		a.groups.Response(addr, r.Start, failed)
	}
	if r.Groups != nil {
		for i, v := range r.Groups {
			if v != "" && i < len(a.groupBy) {
				h, val := a.groupBy[i], a.cl.group(v)
				a.groups.Add(h, val, addr, r.Start, o)
				if a.groups.Apart(h, val) {
					a.timeline.addGroup(groupKey{h, val}, bucket, failed, r.Latency)
				}
			}
		}
	}
	a.client.add(r.Local)
	if failed {
		a.prints.add(&r, addr, &a.cl)
	}
}

// outcomeOf is what a tally counts of r, whose failure the engine decided.
func outcomeOf(r *probe.Result, failed bool) report.Outcome {
	o := report.Outcome{Status: r.Status, Failed: failed, Bytes: r.Bytes, Latency: r.Latency}
	if r.Err != nil {
		o.Class = string(r.Class)
	}
	return o
}

// Close builds the report of every result counted, on top of r, which
// holds what the aggregator does not see (run, plan, DNS); the run's times
// must be set. The verdict is not the aggregator's to make: judge the
// report (Judge) once it is closed.
func (a *Aggregator) Close(r *report.Report) *report.Report {
	r.Schema, r.Revision = report.Schema, report.Revision
	r.DurationS = stat.Round(r.EndedAt.Sub(r.StartedAt.Time).Seconds(), 3)
	// Rates are over the sending window; the wait for requests in flight
	// after it would make them read low.
	secs := r.SendS
	if secs <= 0 {
		secs = r.EndedAt.Sub(r.StartedAt.Time).Seconds()
		r.SendS = stat.Round(secs, 3)
	}
	a.counts(r, secs)
	for i := range r.Endpoints {
		a.forensic[i].fill(&r.Endpoints[i])
		if a.ids != nil && len(a.ids[i]) > 0 {
			r.Endpoints[i].IDRanges = slices.Clone(a.ids[i])
		}
	}
	r.Timeline = a.timeline.report(a.eps, words.SortedKeys(r.Families), r.Groups)
	r.Fingerprints = a.prints.report()
	r.ClientError = a.clientErr
	r.Pauses = nil
	slices.SortFunc(a.pauses, func(x, y pause) int { return x.from.Compare(y.from) })
	for _, p := range a.pauses {
		r.Pauses = append(r.Pauses, report.Pause{At: report.Time{Time: p.from}, DurationS: stat.Round(p.to.Sub(p.from).Seconds(), 3), Requests: p.requests})
	}
	r.Client = a.client.report()
	if r.Thresholds == nil {
		r.Thresholds = []report.Threshold{}
	}
	return r
}

// counts fills what the verdict judges: the tallies of the endpoints,
// families, totals and groups, rates over secs.
func (a *Aggregator) counts(r *report.Report, secs float64) {
	total := report.NewTally()
	fams := map[probe.Family]*report.Tally{}
	r.Endpoints = make([]report.Endpoint, len(a.eps))
	for i, ep := range a.eps {
		t := a.per[i]
		report.MergeTally(total, t)
		f := fams[ep.Family()]
		if f == nil {
			f = report.NewTally()
			fams[ep.Family()] = f
		}
		report.MergeTally(f, t)
		r.Endpoints[i] = report.Endpoint{
			Stats:   t.Stats(secs),
			Target:  ep.Target.String(),
			Host:    ep.Target.Host(),
			Address: ep.Addr.String(),
			Port:    ep.Target.Port(),
			Family:  string(ep.Family()),
		}
	}
	r.Totals = total.Stats(secs)
	r.Families = map[string]*report.Stats{}
	for fam, t := range fams {
		s := t.Stats(secs)
		r.Families[string(fam)] = &s
	}
	r.Groups = a.groups.Report(secs)
}

// SoFar returns what a verdict reads of the results counted so far (the
// tallies, groups and connections, under plan), for a look of
// --until-verdict, and leaves the aggregator as it is.
func (a *Aggregator) SoFar(plan report.Plan) *report.Report {
	r := &report.Report{Plan: plan}
	a.counts(r, 1)
	for i := range r.Endpoints {
		a.forensic[i].judged(&r.Endpoints[i])
	}
	return r
}

// TrackIDs makes the report say which of its run's request IDs it counts
// (report.Endpoint.IDRanges): for a report of part of a run, a watch's
// window. Call it before the first result.
func (a *Aggregator) TrackIDs() {
	a.ids = make([]idRanges, len(a.eps))
}

// SetGroupBy names the headers of probe.Result.Groups, in order.
func (a *Aggregator) SetGroupBy(headers []string) {
	a.groupBy = append([]string(nil), headers...)
	a.groups.Headers = append([]string(nil), headers...)
}
