package collect

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// forensics is the evidence side of one endpoint.
type forensics struct {
	samples            []report.Sample
	connect, tls, ttfb *report.Hist
	fresh, reused      report.ConnStats
	added, removed     time.Time
	history            []report.DNSEvent
	conns              ConnTable
	// lastFailed holds the connections whose latest response was a
	// failure with a status; afterFailure counts, by class, the failures
	// without a response that came right after one on the same connection.
	lastFailed   map[uint64]bool
	afterFailure map[probe.ErrorClass]int64
	trail        report.TrailSampler
}

// maxLastFailed bounds lastFailed: connections live a few requests, so a
// few hundred are open at once; forgetting older ones costs a count, not
// a false one.
const maxLastFailed = 2048

func newForensics() *forensics {
	return &forensics{connect: report.NewPhaseTimes(), tls: report.NewPhaseTimes(), ttfb: report.NewPhaseTimes()}
}

func (f *forensics) add(r *probe.Result, failed bool, cl *cleaner) {
	f.conns.Add(r.ConnID, r.Local.Port(), r.Start, failed, r.Reused)
	f.trail.Add(trailOf(r, failed))
	if r.ConnID != 0 {
		if r.Err != nil && r.Reused && f.lastFailed[r.ConnID] {
			if f.afterFailure == nil {
				f.afterFailure = map[probe.ErrorClass]int64{}
			}
			f.afterFailure[r.Class]++
		}
		switch {
		case failed && r.Err == nil:
			if f.lastFailed == nil || len(f.lastFailed) >= maxLastFailed {
				f.lastFailed = map[uint64]bool{}
			}
			f.lastFailed[r.ConnID] = true
		default:
			delete(f.lastFailed, r.ConnID)
		}
	}
	c := &f.fresh
	if r.Reused {
		c = &f.reused
	}
	c.Requests++
	if failed {
		c.Failed++
	}
	if r.Connect > 0 {
		f.connect.Record(report.Micros(r.Connect))
	}
	if r.TLS > 0 {
		f.tls.Record(report.Micros(r.TLS))
	}
	if r.TTFB > 0 {
		f.ttfb.Record(report.Micros(r.TTFB))
	}
	if r.Evidence != nil {
		f.samples = append(f.samples, sampleOf(r, failed, cl))
	}
}

// judged fills what the verdict reads of an endpoint beyond its tallies:
// its connections and its failures after failures.
func (f *forensics) judged(e *report.Endpoint) {
	if f.conns.seen() {
		c := f.conns.Summary()
		e.Conns = &c
	}
	if len(f.afterFailure) > 0 {
		e.AfterFailure = map[string]int64{}
		for k, n := range f.afterFailure {
			e.AfterFailure[string(k)] = n
		}
	}
}

func (f *forensics) fill(e *report.Endpoint) {
	f.judged(e)
	e.Samples = f.samples
	if e.Samples == nil {
		e.Samples = []report.Sample{}
	}
	e.Phases = report.Phases{Connect: report.PhaseOf(f.connect), TLS: report.PhaseOf(f.tls), TTFB: report.PhaseOf(f.ttfb)}
	e.Connections = map[string]report.ConnStats{"fresh": f.fresh, "reused": f.reused}
	if !f.added.IsZero() {
		e.AddedAt = &report.Time{Time: f.added}
	}
	if !f.removed.IsZero() {
		e.RemovedAt = &report.Time{Time: f.removed}
	}
	e.DNSHistory = f.history
	e.Trail = f.trail.Trail()
}

// sampleOf turns a result's evidence into a Sample, secret headers
// redacted and what the server sent cleaned by cl.
func sampleOf(r *probe.Result, failed bool, cl *cleaner) report.Sample {
	s := report.Sample{
		At: report.Time{Time: r.Start}, Failed: failed, RequestID: r.RequestID, Status: r.Status,
		LatencyMS: report.Millis(r.Latency), TTFBMS: report.Millis(r.TTFB), Reused: r.Reused,
		Headers: map[string]string{},
	}
	if r.Local.IsValid() {
		s.Local = r.Local.String()
	}
	if r.Remote.IsValid() {
		s.Remote = r.Remote.String()
	}
	if r.Err != nil {
		s.Error, s.Class = cl.text(r.Err.Error(), false, false), string(r.Class)
	}
	if ev := r.Evidence; ev != nil {
		s.Proto = cl.text(ev.Proto, false, false)
		for k, vs := range ev.Header {
			if probe.IsSecret(k) {
				s.Headers[k] = Redacted
				continue
			}
			// Each value is cut on its own (probe.MaxEvidenceValue):
			// cleaned one by one, then joined.
			clean := make([]string, len(vs))
			for i, v := range vs {
				clean[i] = cl.text(v, len(v) >= probe.MaxEvidenceValue, false)
			}
			s.Headers[cl.text(k, false, false)] = strings.Join(clean, ", ")
		}
		// A body is cut at probe.BodyPrefix, or where a failed read ended.
		s.Body = cl.body(ev.Body, len(ev.Body) >= probe.BodyPrefix || r.Err != nil)
		s.Truncated = ev.Truncated
	}
	return s
}

// timeline buckets requests and failures per endpoint, and latencies per
// family, per endpoint (the first report.MaxLatencyEndpoints) and per
// instance group (the first report.MaxGroupSeries, with their requests and
// failures): every series on one grid, coarsened together.
type timeline struct {
	start    time.Time
	interval time.Duration
	auto     bool
	series   [][][2]int64           // endpoint -> bucket -> {requests, failed}
	lat      []*report.LatencyTally // endpoint -> latencies; nil past the first MaxLatencyEndpoints
	fams     map[probe.Family]*report.LatencyTally
	groups   map[groupKey]*groupSeries
}

type groupKey struct{ header, value string }

// groupSeries is one instance group over time.
type groupSeries struct {
	counts [][2]int64 // bucket -> {responses, failed}
	lat    report.LatencyTally
}

// addEndpoint gives a new endpoint its series.
func (t *timeline) addEndpoint() {
	var l *report.LatencyTally
	if len(t.series) < report.MaxLatencyEndpoints {
		l = &report.LatencyTally{}
	}
	t.series = append(t.series, nil)
	t.lat = append(t.lat, l)
}

// add counts a request of endpoint ep (of family fam) sent at at, and
// returns its bucket.
func (t *timeline) add(ep int, fam probe.Family, at time.Time, failed bool, latency time.Duration) int {
	if t.start.IsZero() {
		t.start = at
	}
	i := int(at.Sub(t.start) / t.interval)
	if i < 0 {
		i = 0
	}
	for (t.auto && i >= report.MaxPoints) || i >= report.HardMaxPoints {
		t.coarsen()
		i = int(at.Sub(t.start) / t.interval)
	}
	t.series[ep] = countBucket(t.series[ep], i, failed)
	bin := report.LatencyBin(report.Micros(latency))
	if l := t.lat[ep]; l != nil {
		l.Add(i, bin, 1)
	}
	if t.fams == nil {
		t.fams = map[probe.Family]*report.LatencyTally{}
	}
	f := t.fams[fam]
	if f == nil {
		f = &report.LatencyTally{}
		t.fams[fam] = f
	}
	f.Add(i, bin, 1)
	return i
}

// addGroup counts a response of an instance group in bucket i (add's),
// when the group has a series or may still get one.
func (t *timeline) addGroup(k groupKey, i int, failed bool, latency time.Duration) {
	g := t.groups[k]
	if g == nil {
		if len(t.groups) >= report.MaxGroupSeries {
			return
		}
		if t.groups == nil {
			t.groups = map[groupKey]*groupSeries{}
		}
		g = &groupSeries{}
		t.groups[k] = g
	}
	g.counts = countBucket(g.counts, i, failed)
	g.lat.Add(i, report.LatencyBin(report.Micros(latency)), 1)
}

// countBucket counts a request, failed or not, in bucket i of s.
func countBucket(s [][2]int64, i int, failed bool) [][2]int64 {
	for len(s) <= i {
		s = append(s, [2]int64{})
	}
	s[i][0]++
	if failed {
		s[i][1]++
	}
	return s
}

// coarsen doubles the interval, merging bucket pairs.
func (t *timeline) coarsen() {
	t.interval *= 2
	for e, s := range t.series {
		t.series[e] = coarsenCounts(s)
	}
	for _, l := range t.lat {
		if l != nil {
			l.Coarsen()
		}
	}
	for _, l := range t.fams {
		l.Coarsen()
	}
	for _, g := range t.groups {
		g.counts = coarsenCounts(g.counts)
		g.lat.Coarsen()
	}
}

func coarsenCounts(s [][2]int64) [][2]int64 {
	out := make([][2]int64, (len(s)+1)/2)
	for i, b := range s {
		out[i/2][0] += b[0]
		out[i/2][1] += b[1]
	}
	return out
}

// report writes the timeline of eps, with the latencies of every family
// in fams (the report's) and the series of every group in groups (the
// report's, in its order) that has one.
func (t *timeline) report(eps []*probe.Endpoint, fams []string, groups []report.Group) report.Timeline {
	tl := report.Timeline{IntervalS: t.interval.Seconds(), Start: report.Time{Time: t.start}, Series: []report.Series{}}
	n := 0
	for _, s := range t.series {
		n = max(n, len(s))
	}
	for i, ep := range eps {
		s := report.Series{Address: ep.Addr.String(), Target: ep.Target.String(), Requests: make([]int64, n), Failed: make([]int64, n)}
		for j, b := range t.series[i] {
			s.Requests[j], s.Failed[j] = b[0], b[1]
		}
		if l := t.lat[i]; l != nil && n > 0 {
			lat := l.Latencies(n)
			s.Latency = &lat
		}
		tl.Series = append(tl.Series, s)
	}
	if n == 0 {
		return tl
	}
	for _, fam := range fams {
		l := t.fams[probe.Family(fam)]
		if l == nil {
			l = &report.LatencyTally{}
		}
		tl.Families = append(tl.Families, report.FamilySeries{Family: fam, Latency: l.Latencies(n)})
	}
	for _, g := range groups {
		gs := t.groups[groupKey{g.Header, g.Value}]
		if gs == nil {
			continue
		}
		s := report.GroupSeries{Header: g.Header, Value: g.Value, Requests: make([]int64, n), Failed: make([]int64, n), Latency: gs.lat.Latencies(n)}
		for j, b := range gs.counts {
			s.Requests[j], s.Failed[j] = b[0], b[1]
		}
		tl.Groups = append(tl.Groups, s)
	}
	return tl
}

// fingerprints groups failures by who produced them.
type fingerprints struct {
	byKey map[fpKey]*report.Fingerprint
	order []fpKey
}

type fpKey struct {
	status int
	class  probe.ErrorClass
	server string
	hash   uint64
}

// otherKey groups the kinds of failure past maxFingerprints.
var otherKey = fpKey{status: -1}

func (f *fingerprints) add(r *probe.Result, addr string, cl *cleaner) {
	if f.byKey == nil {
		f.byKey = map[fpKey]*report.Fingerprint{}
	}
	k := fpKey{status: r.Status, class: r.Class, server: r.Server, hash: r.BodyHash}
	if r.Err != nil {
		k = fpKey{class: r.Class}
	}
	fp := f.byKey[k]
	if fp == nil && len(f.byKey) >= report.MaxFingerprints {
		k = otherKey
		fp = f.byKey[k]
	}
	if fp == nil && k == otherKey {
		fp = &report.Fingerprint{Merged: true, Addresses: map[string]int64{}}
		f.byKey[k] = fp
		f.order = append(f.order, k)
	}
	if fp == nil {
		// The Server value is cut at probe.MaxEvidenceValue bytes.
		fp = &report.Fingerprint{Status: k.status, Error: string(k.class), Server: cl.text(k.server, len(k.server) >= probe.MaxEvidenceValue, false),
			Addresses: map[string]int64{}}
		if k.hash != 0 {
			fp.BodyHash = strconv.FormatUint(k.hash, 16)
		}
		f.byKey[k] = fp
		f.order = append(f.order, k)
	}
	fp.Count++
	if r.Reused {
		fp.Reused++
	} else {
		fp.Fresh++
	}
	fp.Addresses[addr]++
	if fp.Merged {
		return
	}
	if fp.Body == "" && r.Exemplar != nil {
		fp.Body = cl.body(r.Exemplar, len(r.Exemplar) >= probe.BodyPrefix || r.Err != nil)
		fp.Producer = Producer(k.server, r.Exemplar)
	}
	if fp.Producer == "" && k.server != "" {
		fp.Producer = Producer(k.server, nil)
	}
}

func (f *fingerprints) report() []report.Fingerprint {
	out := make([]report.Fingerprint, 0, len(f.order))
	for _, k := range f.order {
		out = append(out, *f.byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// clientSeen collects the local side of the connections.
type clientSeen struct {
	addrs            map[netip.Addr]bool
	ports            *[1 << 16 / 64]uint64 // a bit per port: 8 KiB however many ports
	nports           int
	portMin, portMax int
}

func (c *clientSeen) add(local netip.AddrPort) {
	if !local.IsValid() {
		return
	}
	if c.addrs == nil {
		c.addrs, c.ports = map[netip.Addr]bool{}, new([1 << 16 / 64]uint64)
	}
	c.addrs[local.Addr()] = true
	p := local.Port()
	word, bit := p/64, uint64(1)<<(p%64)
	if c.ports[word]&bit != 0 {
		return
	}
	c.ports[word] |= bit
	if c.nports == 0 || int(p) < c.portMin {
		c.portMin = int(p)
	}
	c.portMax = max(c.portMax, int(p))
	c.nports++
}

func (c *clientSeen) report() report.Client {
	cl := report.Client{LocalAddresses: []string{}, Ports: []int{}, PortsCount: c.nports, PortMin: c.portMin, PortMax: c.portMax}
	addrs := make([]netip.Addr, 0, len(c.addrs))
	for a := range c.addrs {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Less(addrs[j]) })
	for _, a := range addrs {
		cl.LocalAddresses = append(cl.LocalAddresses, a.String())
	}
	if c.ports != nil {
		for p := range 1 << 16 {
			if c.ports[p/64]&(1<<(p%64)) != 0 {
				cl.Ports = append(cl.Ports, p)
			}
		}
	}
	if len(cl.Ports) > report.MaxPorts {
		cl.PortSet = report.EncodePortSet(cl.Ports)
		cl.Ports = cl.Ports[:report.MaxPorts]
	}
	return cl
}
