package collect

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"pinprobe/probe"
	"pinprobe/report"
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
			if IsSecretHeader(k) {
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

// timeline buckets requests and failures per endpoint.
type timeline struct {
	start    time.Time
	interval time.Duration
	auto     bool
	series   [][][2]int64 // endpoint -> bucket -> {requests, failed}
}

func (t *timeline) add(ep int, at time.Time, failed bool) {
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
	s := t.series[ep]
	for len(s) <= i {
		s = append(s, [2]int64{})
	}
	s[i][0]++
	if failed {
		s[i][1]++
	}
	t.series[ep] = s
}

// coarsen doubles the interval, merging bucket pairs.
func (t *timeline) coarsen() {
	t.interval *= 2
	for e, s := range t.series {
		out := make([][2]int64, (len(s)+1)/2)
		for i, b := range s {
			out[i/2][0] += b[0]
			out[i/2][1] += b[1]
		}
		t.series[e] = out
	}
}

func (t *timeline) report(eps []*probe.Endpoint) report.Timeline {
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
		tl.Series = append(tl.Series, s)
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
