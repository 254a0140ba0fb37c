package report

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"pinprobe/probe"
)

// Latencies are recorded in microseconds from 1 µs to one hour, to 3
// significant digits; every report uses this geometry so histograms merge.
const (
	histMin    = 1
	histMax    = int64(time.Hour / time.Microsecond)
	histDigits = 3
)

func newHist() *hdr.Histogram { return hdr.New(histMin, histMax, histDigits) }

// Outcome is one request's result as a tally counts it.
type Outcome struct {
	// Status is the HTTP status of the response; not counted when Class
	// is set.
	Status int
	// Class is the error class of a request that got no response; "" when
	// it got one.
	Class   string
	Failed  bool
	Bytes   int64
	Latency time.Duration
}

// tally accumulates the results of one scope: an endpoint, a family, an
// instance. The aggregator and Merge both roll up into it. One goroutine
// writes it.
type tally struct {
	requests, ok, failed, dropped, bytes int64
	clientErrors                         int64       // requests this machine could not send (probe.ClassClient)
	status                               [1000]int64 // by HTTP status: cheaper than a map on the hot path
	errors                               map[string]int64
	hist                                 *hdr.Histogram
	sum                                  time.Duration
	min, max                             time.Duration
}

func newTally() *tally {
	return &tally{errors: map[string]int64{}, hist: newHist()}
}

// Live holds running counts that another goroutine (the progress display)
// may read while the collector writes them.
type Live struct {
	Requests, Failed, Dropped atomic.Int64
	ClientErrors              atomic.Int64 // requests this machine could not send
	FamilyRequests            map[probe.Family]*atomic.Int64
	FamilyFailed              map[probe.Family]*atomic.Int64

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
	per      []*tally
	forensic []*forensics
	fail     FailStatus
	live     *Live
	timeline timeline
	prints   fingerprints
	client   clientSeen
	scrub    *strings.Replacer // the run's secrets, nil when none
	groupBy  []string          // the headers of probe.Result.Groups, in order
	groups   groupTally
	// clientErr is the first client-side error, to name its cause.
	clientErr string
}

// NewAggregator returns an Aggregator for eps, whose IDs must be their indexes.
func NewAggregator(eps []*probe.Endpoint, fail FailStatus) *Aggregator {
	a := &Aggregator{fail: fail, live: &Live{
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
	a.live.mu.Lock()
	a.live.endpoints = append(a.live.endpoints, &LiveEndpoint{Endpoint: ep})
	a.live.mu.Unlock()
	a.per = append(a.per, newTally())
	a.forensic = append(a.forensic, newForensics())
	a.timeline.series = append(a.timeline.series, nil)
}

// MarkRemoved records that endpoint id's address vanished from DNS at t.
func (a *Aggregator) MarkRemoved(id int, t time.Time) {
	f := a.forensic[id]
	f.removed = t
	f.history = append(f.history, DNSEvent{At: Time{t}, Event: "removed"})
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
	f.history = append(f.history, DNSEvent{At: Time{t}, Event: "returned"})
}

// Live returns the running counts, safe to read concurrently with Add.
func (a *Aggregator) Live() *Live { return a.live }

// Failed reports whether r counts as a failed request: what the engine
// decided (r.Failed), or for a result the aggregator's own --fail-status
// (a result built by hand, in tests) would say.
func (a *Aggregator) Failed(r *probe.Result) bool {
	return r.Failed || r.Err != nil || a.fail.Fails(r.Status)
}

// Add counts one result.
func (a *Aggregator) Add(r probe.Result) {
	t := a.per[r.Endpoint]
	if r.Dropped > 0 {
		t.dropped += int64(r.Dropped)
		a.live.Dropped.Add(int64(r.Dropped))
		return
	}
	if r.Class == probe.ClassClient {
		// The client's own trouble (out of descriptors or ports): not a
		// request the backend saw, so not in requests, and never a failure.
		t.clientErrors++
		a.live.ClientErrors.Add(1)
		if a.clientErr == "" && r.Err != nil {
			a.clientErr = r.Err.Error()
		}
		return
	}
	fam := a.eps[r.Endpoint].Family()
	failed := a.Failed(&r)
	a.live.Requests.Add(1)
	a.live.FamilyRequests[fam].Add(1)
	le := a.live.endpoints[r.Endpoint] // the collector's own list: no lock to read it
	le.Requests.Add(1)
	o := outcomeOf(&r, failed)
	t.record(o)
	if failed {
		a.live.Failed.Add(1)
		a.live.FamilyFailed[fam].Add(1)
		le.Failed.Add(1)
	}

	a.forensic[r.Endpoint].add(&r, failed)
	if r.Groups != nil {
		addr := a.eps[r.Endpoint].Addr.String()
		for i, v := range r.Groups {
			if v != "" && i < len(a.groupBy) {
				a.groups.add(a.groupBy[i], v, addr, o)
			}
		}
	}
	a.timeline.add(r.Endpoint, r.Start, failed)
	a.client.add(r.Local)
	if failed {
		a.prints.add(&r, a.eps[r.Endpoint].Addr.String())
	}
}

// outcomeOf is what a tally counts of r, whose failure the engine decided.
func outcomeOf(r *probe.Result, failed bool) Outcome {
	o := Outcome{Status: r.Status, Failed: failed, Bytes: r.Bytes, Latency: r.Latency}
	if r.Err != nil {
		o.Class = string(r.Class)
	}
	return o
}

// record counts one request's outcome in t.
func (t *tally) record(o Outcome) {
	t.requests++
	if o.Class != "" {
		t.errors[o.Class]++
	} else if o.Status >= 0 && o.Status < len(t.status) {
		t.status[o.Status]++
	}
	if o.Failed {
		t.failed++
	} else {
		t.ok++
	}
	t.bytes += o.Bytes
	t.sum += o.Latency
	if t.requests == 1 || o.Latency < t.min {
		t.min = o.Latency
	}
	t.max = max(t.max, o.Latency)
	t.hist.RecordValue(micros(o.Latency)) // in range by construction
}

func micros(d time.Duration) int64 { return min(max(d.Microseconds(), histMin), histMax) }

// Close builds the report of every result counted, on top of r, which
// holds what the aggregator does not see (run, plan, DNS); the run's times
// must be set. The verdict is not the aggregator's to make: judge the
// report (Judge) once it is closed.
func (a *Aggregator) Close(r *Report) *Report {
	r.Schema = Schema
	r.DurationS = round(r.EndedAt.Sub(r.StartedAt.Time).Seconds(), 3)
	// Rates are over the sending window; the wait for requests in flight
	// after it would make them read low.
	secs := r.SendS
	if secs <= 0 {
		secs = r.EndedAt.Sub(r.StartedAt.Time).Seconds()
		r.SendS = round(secs, 3)
	}
	a.counts(r, secs)
	for i := range r.Endpoints {
		a.forensic[i].fill(&r.Endpoints[i])
	}
	r.Timeline = a.timeline.report(a.eps)
	r.Fingerprints = a.prints.report()
	r.ClientError = a.clientErr
	a.cleanEvidence(r)
	r.Client = a.client.report()
	if r.Thresholds == nil {
		r.Thresholds = []Threshold{}
	}
	return r
}

// counts fills what the verdict judges: the tallies of the endpoints,
// families, totals and groups, rates over secs.
func (a *Aggregator) counts(r *Report, secs float64) {
	total := newTally()
	fams := map[probe.Family]*tally{}
	r.Endpoints = make([]Endpoint, len(a.eps))
	for i, ep := range a.eps {
		t := a.per[i]
		merge(total, t)
		f := fams[ep.Family()]
		if f == nil {
			f = newTally()
			fams[ep.Family()] = f
		}
		merge(f, t)
		r.Endpoints[i] = Endpoint{
			Stats:   t.stats(secs),
			Target:  ep.Target.String(),
			Host:    ep.Target.Host(),
			Address: ep.Addr.String(),
			Port:    ep.Target.Port(),
			Family:  string(ep.Family()),
		}
	}
	r.Totals = total.stats(secs)
	r.Families = map[string]*Stats{}
	for fam, t := range fams {
		s := t.stats(secs)
		r.Families[string(fam)] = &s
	}
	r.Groups = a.groups.report(secs)
}

// SoFar returns what a verdict reads of the results counted so far (the
// tallies, groups and connections, under plan), for a look of
// --until-verdict, and leaves the aggregator as it is.
func (a *Aggregator) SoFar(plan Plan) *Report {
	r := &Report{Plan: plan}
	a.counts(r, 1)
	for i := range r.Endpoints {
		a.forensic[i].judged(&r.Endpoints[i])
	}
	return r
}

func merge(dst, src *tally) {
	if src.requests > 0 && (dst.requests == 0 || src.min < dst.min) {
		dst.min = src.min
	}
	dst.max = max(dst.max, src.max)
	dst.requests += src.requests
	dst.ok += src.ok
	dst.failed += src.failed
	dst.dropped += src.dropped
	dst.clientErrors += src.clientErrors
	dst.bytes += src.bytes
	dst.sum += src.sum
	for k, v := range src.status {
		dst.status[k] += v
	}
	for k, v := range src.errors {
		dst.errors[k] += v
	}
	dst.hist.Merge(src.hist)
}

func (t *tally) stats(secs float64) Stats {
	s := Stats{
		Requests: t.requests, OK: t.ok, Failed: t.failed, Dropped: t.dropped, Bytes: t.bytes, ClientErrors: t.clientErrors,
		Status: map[string]int64{}, Errors: map[string]int64{},
	}
	if t.requests > 0 {
		s.FailureRate = round(float64(t.failed)/float64(t.requests), 6)
		// The histogram answers with the highest value of a bucket (up to
		// 0.1% above what was recorded, and whole microseconds below it);
		// clamp to the exact extremes so min <= p50 <= … <= p999 <= max.
		lo, hi := ms(t.min), ms(t.max)
		q := func(p float64) float64 { return min(max(usToMS(t.hist.ValueAtQuantile(p)), lo), hi) }
		s.LatencyMS = Latency{
			Min:  lo,
			Mean: ms(t.sum / time.Duration(t.requests)),
			P50:  q(50),
			P90:  q(90),
			P99:  q(99),
			P999: q(99.9),
			Max:  hi,
		}
	}
	if secs > 0 {
		s.RPS = round(float64(t.requests)/secs, 2)
	}
	for k, v := range t.status {
		if v > 0 {
			s.Status[strconv.Itoa(k)] = v
		}
	}
	for k, v := range t.errors {
		s.Errors[k] = v
	}
	if enc, err := t.hist.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
		s.HDR = string(enc)
	}
	return s
}

// DecodeHDR decodes a Stats.HDR string; reports written by any pinprobe merge exactly.
func DecodeHDR(s string) (*hdr.Histogram, error) { return hdr.Decode([]byte(s)) }

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }
func usToMS(us int64) float64    { return round(float64(us)/1000, 3) }
func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
