package main

// Scenario tests of the forensics features (issue 3): request IDs, samples,
// fingerprints, phases, timeline, client ports, DNS re-resolution and the
// verdict, end to end through run() against real servers on 127.0.0.1,
// 127.0.0.2 and [::1] (one port), decoding the JSON report as a script would.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"pinprobe/report"
)

// ---------------------------------------------------------------------------
// Servers that remember what they saw

// fxAnswer is what a backend answers to one request.
type fxAnswer struct {
	status int
	delay  time.Duration
	header map[string]string
	body   string
}

// fxPolicy decides a backend's answer to its n-th request (from 1).
type fxPolicy func(n int64, r *http.Request) fxAnswer

// fxFleet is one HTTP server per loopback address, all on one port. Each
// records, server side, every X-Request-Id, arrival time and client address.
type fxFleet struct {
	host     string
	port     int
	backends []*fxBackend

	mu      sync.Mutex
	ids     map[string]int // every X-Request-Id value seen, over all backends
	noID    int            // requests without X-Request-Id
	multiID int            // requests with more than one X-Request-Id
	ports   map[int]bool   // client ports seen (the servers' remote ports)
	ips     map[string]bool
}

type fxBackend struct {
	f      *fxFleet
	addr   netip.Addr
	policy fxPolicy

	n         atomic.Int64
	misplaced atomic.Int64
	mu        sync.Mutex
	ids       map[string]bool
	times     []time.Time // arrival of every request
}

// fxOK answers 200 with a short body naming the backend.
func fxOK(n int64, r *http.Request) fxAnswer { return fxAnswer{status: http.StatusOK} }

// fxNginx502 is nginx's own 502 page; the body names the request, so it
// differs on every request and only normalisation groups it.
func fxNginx502(n int64, r *http.Request) fxAnswer {
	return fxAnswer{
		status: http.StatusBadGateway,
		header: map[string]string{
			"Server":        "nginx/1.22.1",
			"Content-Type":  "text/html",
			"Set-Cookie":    "gwsession=fx-set-cookie-secret; Path=/",
			"X-Api-Key":     "fx-api-key-secret",
			"Authorization": "Bearer fx-authorization-secret",
		},
		body: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n" +
			"<hr><center>nginx/1.22.1</center>\r\n<!-- request " + r.Header.Get("X-Request-Id") + " at " +
			time.Now().UTC().Format(time.RFC3339Nano) + " -->\r\n</body>\r\n</html>\r\n",
	}
}

// fxEvery answers 503 to every k-th request of the backend and 200 otherwise.
func fxEvery(k int64) fxPolicy {
	return func(n int64, r *http.Request) fxAnswer {
		if n%k == 0 {
			return fxAnswer{status: http.StatusServiceUnavailable, header: map[string]string{"Server": "fx-backend/1.0"}}
		}
		return fxAnswer{status: http.StatusOK}
	}
}

// startFX serves one backend per address, with policies[address] (fxOK when
// absent). It skips the test where an address is missing (see listenPort).
func startFX(t *testing.T, host string, policies map[string]fxPolicy, addrs ...string) *fxFleet {
	t.Helper()
	port, lns := listenPort(t, addrs...)
	f := &fxFleet{host: host, port: port, ids: map[string]int{}, ports: map[int]bool{}, ips: map[string]bool{}}
	for _, ln := range lns {
		b := &fxBackend{f: f, addr: ln.Addr().(*net.TCPAddr).AddrPort().Addr().Unmap(), ids: map[string]bool{}}
		b.policy = policies[b.addr.String()]
		if b.policy == nil {
			b.policy = fxOK
		}
		srv := httptest.NewUnstartedServer(b)
		srv.Listener.Close()
		srv.Listener = ln
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.Start()
		t.Cleanup(srv.Close)
		f.backends = append(f.backends, b)
	}
	return f
}

func (b *fxBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	n := b.n.Add(1)
	f := b.f
	local, _ := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if local == nil || local.AddrPort().Addr().Unmap() != b.addr || r.Host != net.JoinHostPort(f.host, strconv.Itoa(f.port)) {
		b.misplaced.Add(1)
	}
	ids := r.Header.Values("X-Request-Id")
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	f.mu.Lock()
	switch len(ids) {
	case 0:
		f.noID++
	case 1:
	default:
		f.multiID++
	}
	for _, id := range ids {
		f.ids[id]++
	}
	f.ports[int(remote.Port())] = true
	f.ips[remote.Addr().Unmap().String()] = true
	f.mu.Unlock()
	b.mu.Lock()
	for _, id := range ids {
		b.ids[id] = true
	}
	b.times = append(b.times, now)
	b.mu.Unlock()

	a := b.policy(n, r)
	if a.delay > 0 {
		tm := time.NewTimer(a.delay)
		select {
		case <-tm.C:
		case <-r.Context().Done():
			tm.Stop()
		}
	}
	if a.body == "" {
		a.body = fmt.Sprintf("%s answers %d\n", b.addr, a.status)
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	for k, v := range a.header {
		h.Set(k, v)
	}
	if len(ids) > 0 {
		h.Set("X-Request-Id", ids[0]) // as gateways echo it
	}
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (f *fxFleet) url() string { return fmt.Sprintf("http://%s:%d/", f.host, f.port) }

// resolve is the --resolve value for the fleet's addresses plus extra ones.
func (f *fxFleet) resolve(extra ...string) string {
	var addrs []string
	for _, b := range f.backends {
		addrs = append(addrs, b.addr.String())
	}
	return fmt.Sprintf("%s:%d:%s", f.host, f.port, strings.Join(append(addrs, extra...), ","))
}

func (f *fxFleet) backend(t *testing.T, addr string) *fxBackend {
	t.Helper()
	for _, b := range f.backends {
		if b.addr.String() == addr {
			return b
		}
	}
	t.Fatalf("no backend %s", addr)
	return nil
}

func (b *fxBackend) sawID(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ids[id]
}

// arrivals returns the arrival times of the backend's requests.
func (b *fxBackend) arrivals() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.times)
}

// check fails the test for a misplaced request and unless every address's
// server-side count equals its requests in the report (summed over the
// endpoints of the address: one that comes back gets a new endpoint).
func (f *fxFleet) check(t *testing.T, rep *fxReport) {
	t.Helper()
	got := map[string]int64{}
	for _, e := range rep.Endpoints {
		got[e.Address] += e.Requests
	}
	for _, b := range f.backends {
		if n := b.misplaced.Load(); n != 0 {
			t.Errorf("server %s: %d requests arrived on another address or with another Host", b.addr, n)
		}
		if got[b.addr.String()] != b.n.Load() {
			t.Errorf("server %s counted %d requests; the report has %d", b.addr, b.n.Load(), got[b.addr.String()])
		}
	}
}

// checkClient compares the report's client section with what the servers
// saw: the same local addresses and the same set of ports. Only valid when
// every request reached a server.
func (f *fxFleet) checkClient(t *testing.T, rep *fxReport) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var ips []string
	for ip := range f.ips {
		ips = append(ips, ip)
	}
	var want []netip.Addr
	for _, ip := range ips {
		want = append(want, netip.MustParseAddr(ip))
	}
	slices.SortFunc(want, func(a, b netip.Addr) int { return a.Compare(b) })
	wantS := make([]string, len(want))
	for i, a := range want {
		wantS[i] = a.String()
	}
	if !slices.Equal(rep.Client.LocalAddresses, wantS) {
		t.Errorf("client.local_addresses = %v; the servers saw clients at %v", rep.Client.LocalAddresses, wantS)
	}
	if rep.Client.PortsCount != len(f.ports) {
		t.Errorf("client.ports_count = %d; the servers saw %d client ports", rep.Client.PortsCount, len(f.ports))
	}
	if len(f.ports) <= 1000 {
		var ports []int
		for p := range f.ports {
			ports = append(ports, p)
		}
		sort.Ints(ports)
		if !slices.Equal(rep.Client.Ports, ports) {
			t.Errorf("client.ports = %v; the servers saw %v", rep.Client.Ports, ports)
		}
	}
}

// ---------------------------------------------------------------------------
// A DNS server whose answer changes during the run

type fxZone struct {
	mu       sync.Mutex
	host     string
	addrs    []netip.Addr
	script   [][]netip.Addr // answers of the next A queries, in turn; the last one stays
	aQueries atomic.Int64   // A queries answered
}

// set makes every answer from now on addrs.
func (z *fxZone) set(addrs ...netip.Addr) {
	z.mu.Lock()
	z.addrs, z.script = addrs, nil
	z.mu.Unlock()
}

// play makes each of the next A queries switch the answer to the next set:
// one resolution per set (pinprobe sends one A query per resolution).
func (z *fxZone) play(sets ...[]netip.Addr) {
	z.mu.Lock()
	z.script = sets
	z.mu.Unlock()
}

// startFXDNS answers A and AAAA queries for host from the zone's current
// addresses; every other name is NXDOMAIN. It returns the --dns-server value.
func startFXDNS(t *testing.T, host string, addrs ...netip.Addr) (*fxZone, string) {
	t.Helper()
	z := &fxZone{host: dns.Fqdn(strings.ToLower(host)), addrs: addrs}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("dns: listen: %v", err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.Authoritative = true
		if len(q.Question) != 1 || strings.ToLower(q.Question[0].Name) != z.host {
			m.Rcode = dns.RcodeNameError
			w.WriteMsg(m)
			return
		}
		qq := q.Question[0]
		z.mu.Lock()
		if qq.Qtype == dns.TypeA {
			z.aQueries.Add(1)
			if len(z.script) > 0 {
				z.addrs, z.script = z.script[0], z.script[1:]
			}
		}
		addrs := slices.Clone(z.addrs)
		z.mu.Unlock()
		hdr := dns.RR_Header{Name: qq.Name, Class: dns.ClassINET, Ttl: 0}
		for _, a := range addrs {
			switch {
			case qq.Qtype == dns.TypeA && a.Is4():
				hdr.Rrtype = dns.TypeA
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
			case qq.Qtype == dns.TypeAAAA && a.Is6():
				hdr.Rrtype = dns.TypeAAAA
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
			}
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return z, pc.LocalAddr().String()
}

// ---------------------------------------------------------------------------
// The forensic parts of the JSON report

type fxReport struct {
	StartedAt    string               `json:"started_at"`
	EndedAt      string               `json:"ended_at"`
	DurationS    float64              `json:"duration_s"`
	DNS          []fxDNS              `json:"dns"`
	Totals       jsonStats            `json:"totals"`
	Families     map[string]jsonStats `json:"families"`
	Endpoints    []fxEndpoint         `json:"endpoints"`
	Fingerprints []fxFingerprint      `json:"fingerprints"`
	Timeline     fxTimeline           `json:"timeline"`
	Client       fxClient             `json:"client"`
	Verdict      fxVerdict            `json:"verdict"`
}

type fxDNS struct {
	Host      string     `json:"host"`
	Addresses []string   `json:"addresses"`
	Changes   []fxChange `json:"changes"`
}

type fxChange struct {
	At      string   `json:"at"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

type fxEndpoint struct {
	jsonStats
	Bytes       int64                  `json:"bytes"`
	Target      string                 `json:"target"`
	Address     string                 `json:"address"`
	Port        int                    `json:"port"`
	Family      string                 `json:"family"`
	AddedAt     *string                `json:"added_at"`
	RemovedAt   *string                `json:"removed_at"`
	Phases      fxPhases               `json:"phases_ms"`
	Connections map[string]fxConnStats `json:"connections"`
	Samples     []fxSample             `json:"samples"`
}

type fxPhase struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

type fxPhases struct {
	Connect fxPhase `json:"connect"`
	TLS     fxPhase `json:"tls"`
	TTFB    fxPhase `json:"ttfb"`
}

type fxConnStats struct {
	Requests int64 `json:"requests"`
	Failed   int64 `json:"failed"`
}

type fxSample struct {
	At        string            `json:"at"`
	RequestID string            `json:"request_id"`
	Status    int               `json:"status"`
	Error     string            `json:"error"`
	Class     string            `json:"class"`
	LatencyMS float64           `json:"latency_ms"`
	Local     string            `json:"local"`
	Remote    string            `json:"remote"`
	Reused    bool              `json:"reused"`
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
}

type fxFingerprint struct {
	Status    int              `json:"status"`
	Error     string           `json:"error"`
	Server    string           `json:"server"`
	BodyHash  string           `json:"body_hash"`
	Producer  string           `json:"producer"`
	Count     int64            `json:"count"`
	Fresh     int64            `json:"fresh"`
	Reused    int64            `json:"reused"`
	Addresses map[string]int64 `json:"addresses"`
	Body      string           `json:"body"`
}

type fxTimeline struct {
	IntervalS float64    `json:"interval_s"`
	Start     string     `json:"start"`
	Series    []fxSeries `json:"series"`
}

type fxSeries struct {
	Address  string  `json:"address"`
	Target   string  `json:"target"`
	Requests []int64 `json:"requests"`
	Failed   []int64 `json:"failed"`
}

type fxClient struct {
	LocalAddresses []string `json:"local_addresses"`
	Ports          []int    `json:"ports"`
	PortsCount     int      `json:"ports_count"`
	PortMin        int      `json:"port_min"`
	PortMax        int      `json:"port_max"`
}

type fxVerdict struct {
	Status   string      `json:"status"`
	Summary  string      `json:"summary"`
	Suspects []fxSuspect `json:"suspects"`
}

type fxSuspect struct {
	Address     string     `json:"address"`
	Family      string     `json:"family"`
	Requests    int64      `json:"requests"`
	Failed      int64      `json:"failed"`
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
	P           float64    `json:"p"`
}

// fxOpts says what a run asked for, so the invariants can be checked.
type fxOpts struct {
	samples int  // --samples (5 by default)
	noReqID bool // pinprobe added no X-Request-Id (--no-request-id or a -H one)
}

// fxRun runs pinprobe with --format json -q and args, expects exit 0,
// decodes the report and checks the core and forensic invariants.
func fxRun(t *testing.T, o fxOpts, args ...string) (*fxReport, string) {
	t.Helper()
	args = append([]string{"--format", "json", "-q"}, args...)
	code, stdout, stderr := pinprobe(t, args...)
	if code != exitOK {
		t.Fatalf("pinprobe %s: exit %d; want 0; stderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	checkReport(t, decodeReport(t, []byte(stdout)))
	var rep fxReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, stdout)
	}
	checkForensics(t, &rep, stdout, o)
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr)
	}
	return &rep, stdout
}

func fxTime(t *testing.T, scope, s string) time.Time {
	t.Helper()
	if !jsonTime.MatchString(s) {
		t.Errorf("%s = %q; want YYYY-MM-DDTHH:MM:SS.mmmZ", scope, s)
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s = %q: %v", scope, s, err)
	}
	return tm
}

// sampleFailed reports whether a sample is a failed request (5xx or no response).
func sampleFailed(s fxSample) bool { return s.Error != "" || s.Status >= 500 }

// checkForensics asserts what must hold in every report: the keys of the
// contract, timeline sums, fingerprint sums, connection splits, the sample
// quota, well-formed samples, client ports and a consistent verdict.
func checkForensics(t *testing.T, rep *fxReport, raw string, o fxOpts) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	requireKeys(t, "report", m, "fingerprints", "timeline", "client", "verdict")
	tl, _ := m["timeline"].(map[string]any)
	requireKeys(t, "timeline", tl, "interval_s", "series")
	v, _ := m["verdict"].(map[string]any)
	requireKeys(t, "verdict", v, "status", "summary", "suspects")
	eps, _ := m["endpoints"].([]any)
	for i, e := range eps {
		em, _ := e.(map[string]any)
		requireKeys(t, fmt.Sprintf("endpoints[%d]", i), em, "samples", "phases_ms", "connections")
		ss, _ := em["samples"].([]any)
		for j, s := range ss {
			sm, _ := s.(map[string]any)
			requireKeys(t, fmt.Sprintf("endpoints[%d].samples[%d]", i, j), sm, "at", "status", "error", "latency_ms", "headers", "body")
		}
	}

	start := fxTime(t, "started_at", rep.StartedAt)
	end := fxTime(t, "ended_at", rep.EndedAt)

	// Timeline: one series per endpoint, in order, summing to its counts.
	if rep.Timeline.IntervalS <= 0 {
		t.Errorf("timeline.interval_s = %v; want > 0", rep.Timeline.IntervalS)
	}
	if rep.Timeline.Start != rep.StartedAt {
		t.Errorf("timeline.start = %q; want started_at %q", rep.Timeline.Start, rep.StartedAt)
	}
	if len(rep.Timeline.Series) != len(rep.Endpoints) {
		t.Errorf("timeline has %d series for %d endpoints", len(rep.Timeline.Series), len(rep.Endpoints))
	}
	maxBuckets := int(math.Ceil(rep.DurationS/rep.Timeline.IntervalS)) + 1
	for i := range min(len(rep.Timeline.Series), len(rep.Endpoints)) {
		s, e := rep.Timeline.Series[i], rep.Endpoints[i]
		if s.Address != e.Address || s.Target != e.Target {
			t.Errorf("timeline.series[%d] is %s %s; endpoint %d is %s %s", i, s.Address, s.Target, i, e.Address, e.Target)
		}
		if len(s.Requests) != len(s.Failed) || len(s.Requests) != len(rep.Timeline.Series[0].Requests) {
			t.Errorf("timeline.series[%d]: %d request buckets, %d failed buckets, series[0] has %d",
				i, len(s.Requests), len(s.Failed), len(rep.Timeline.Series[0].Requests))
		}
		if len(s.Requests) > maxBuckets {
			t.Errorf("timeline.series[%d]: %d buckets of %vs for a %vs run", i, len(s.Requests), rep.Timeline.IntervalS, rep.DurationS)
		}
		var req, fail int64
		for j := range s.Requests {
			req += s.Requests[j]
			if j < len(s.Failed) {
				fail += s.Failed[j]
				if s.Failed[j] > s.Requests[j] || s.Failed[j] < 0 {
					t.Errorf("timeline.series[%d] bucket %d: %d failed of %d requests", i, j, s.Failed[j], s.Requests[j])
				}
			}
		}
		if req != e.Requests || fail != e.Failed {
			t.Errorf("timeline of %s sums to %d requests, %d failed; the endpoint has %d, %d", e.Address, req, fail, e.Requests, e.Failed)
		}
	}

	// Fingerprints: every failure in exactly one, per address too.
	var fpTotal int64
	fpByAddr := map[string]int64{}
	for i, fp := range rep.Fingerprints {
		fpTotal += fp.Count
		if fp.Fresh+fp.Reused != fp.Count {
			t.Errorf("fingerprints[%d]: fresh %d + reused %d != count %d", i, fp.Fresh, fp.Reused, fp.Count)
		}
		if (fp.Status == 0) == (fp.Error == "") {
			t.Errorf("fingerprints[%d]: status %d, error %q; want exactly one of them", i, fp.Status, fp.Error)
		}
		if len(fp.Body) > 512 {
			t.Errorf("fingerprints[%d]: body of %d bytes; want at most 512", i, len(fp.Body))
		}
		var n int64
		for a, c := range fp.Addresses {
			n += c
			fpByAddr[a] += c
		}
		if n != fp.Count {
			t.Errorf("fingerprints[%d]: addresses %v sum to %d; count is %d", i, fp.Addresses, n, fp.Count)
		}
		if i > 0 && fp.Count > rep.Fingerprints[i-1].Count {
			t.Errorf("fingerprints not sorted by count: [%d] %d after [%d] %d", i, fp.Count, i-1, rep.Fingerprints[i-1].Count)
		}
	}
	if fpTotal != rep.Totals.Failed {
		t.Errorf("fingerprints count %d failures; totals.failed = %d", fpTotal, rep.Totals.Failed)
	}
	failedByAddr := map[string]int64{}
	for _, e := range rep.Endpoints {
		if e.Failed > 0 {
			failedByAddr[e.Address] += e.Failed
		}
	}
	if !equalCounts(fpByAddr, failedByAddr) {
		t.Errorf("fingerprints by address %v; endpoints failed %v", fpByAddr, failedByAddr)
	}

	addrs := map[string]bool{}
	for _, e := range rep.Endpoints {
		addrs[e.Address] = true
		scope := "endpoint " + e.Address
		fresh, reused := e.Connections["fresh"], e.Connections["reused"]
		if fresh.Requests+reused.Requests != e.Requests || fresh.Failed+reused.Failed != e.Failed {
			t.Errorf("%s: connections %+v; want fresh+reused = %d requests, %d failed", scope, e.Connections, e.Requests, e.Failed)
		}
		for name, p := range map[string]fxPhase{"connect": e.Phases.Connect, "tls": e.Phases.TLS, "ttfb": e.Phases.TTFB} {
			if p.Count > e.Requests || p.Count < 0 || (p.Count > 0 && !(p.P50 <= p.P99 && p.P99 <= p.Max)) {
				t.Errorf("%s: phase %s %+v; want count <= %d requests and p50 <= p99 <= max", scope, name, p, e.Requests)
			}
		}
		if e.Phases.Connect.Count > fresh.Requests {
			t.Errorf("%s: %d connect phases for %d requests on fresh connections", scope, e.Phases.Connect.Count, fresh.Requests)
		}

		// The sample quota: the first N failures and one success, exactly.
		var nFailed, nOK int64
		for j, s := range e.Samples {
			ss := fmt.Sprintf("%s sample %d", scope, j)
			if sampleFailed(s) {
				nFailed++
			} else {
				nOK++
			}
			at := fxTime(t, ss+" at", s.At)
			if at.Before(start.Add(-time.Millisecond)) || at.After(end) {
				t.Errorf("%s: at %s outside the run %s .. %s", ss, s.At, rep.StartedAt, rep.EndedAt)
			}
			if s.LatencyMS <= 0 {
				t.Errorf("%s: latency_ms %v; want > 0", ss, s.LatencyMS)
			}
			if s.Headers == nil {
				t.Errorf("%s: headers null; want an object", ss)
			}
			if len(s.Body) > 512 {
				t.Errorf("%s: body of %d bytes; want at most 512", ss, len(s.Body))
			}
			if !o.noReqID && s.RequestID == "" {
				t.Errorf("%s: request_id %q; want pinprobe's X-Request-Id", ss, s.RequestID)
			}
			if s.Status != 0 {
				want := netip.AddrPortFrom(netip.MustParseAddr(e.Address), uint16(e.Port)).String()
				if s.Remote != want {
					t.Errorf("%s: remote %q; want %q", ss, s.Remote, want)
				}
				if lp, err := netip.ParseAddrPort(s.Local); err != nil || lp.Port() == 0 {
					t.Errorf("%s: local %q; want the client's ip:port", ss, s.Local)
				} else if !slices.Contains(rep.Client.LocalAddresses, lp.Addr().String()) {
					t.Errorf("%s: local %s not among client.local_addresses %v", ss, s.Local, rep.Client.LocalAddresses)
				} else if len(rep.Client.Ports) < 1000 && !slices.Contains(rep.Client.Ports, int(lp.Port())) {
					t.Errorf("%s: local port %d not among client.ports", ss, lp.Port())
				}
			} else if s.Error == "" || s.Class == "" {
				t.Errorf("%s: no status, error %q, class %q; want the error and its class", ss, s.Error, s.Class)
			}
		}
		samples := int64(o.samples)
		if samples < 0 {
			samples = 0
		}
		wantFailed, wantOK := min(samples, e.Failed), min(1, e.OK)
		if samples == 0 {
			wantOK = 0
		}
		if nFailed != wantFailed || nOK != wantOK {
			t.Errorf("%s (%d ok, %d failed): %d failed + %d ok samples; want %d + %d (--samples %d)",
				scope, e.OK, e.Failed, nFailed, nOK, wantFailed, wantOK, o.samples)
		}
	}

	// Client: sorted unique ports within [port_min, port_max].
	c := rep.Client
	if !slices.IsSorted(c.Ports) || len(slices.Compact(slices.Clone(c.Ports))) != len(c.Ports) {
		t.Errorf("client.ports not sorted and unique: %v", c.Ports)
	}
	if len(c.Ports) != min(c.PortsCount, 1000) {
		t.Errorf("client.ports lists %d ports; ports_count = %d", len(c.Ports), c.PortsCount)
	}
	if len(c.Ports) > 0 && (c.Ports[0] != c.PortMin || c.Ports[len(c.Ports)-1] > c.PortMax) {
		t.Errorf("client.ports %d..%d; port_min %d, port_max %d", c.Ports[0], c.Ports[len(c.Ports)-1], c.PortMin, c.PortMax)
	}
	for _, a := range c.LocalAddresses {
		if _, err := netip.ParseAddr(a); err != nil {
			t.Errorf("client.local_addresses has %q: %v", a, err)
		}
	}

	// Verdict: a known status, and suspects that exist.
	switch rep.Verdict.Status {
	case "ok":
		if rep.Totals.Failed != 0 {
			t.Errorf("verdict ok with %d failures", rep.Totals.Failed)
		}
	case "concentrated":
		if len(rep.Verdict.Suspects) == 0 {
			t.Errorf("verdict concentrated without a suspect: %q", rep.Verdict.Summary)
		}
	case "spread", "no-data":
	default:
		t.Errorf("verdict.status = %q; want ok, concentrated, spread or no-data", rep.Verdict.Status)
	}
	if rep.Verdict.Summary == "" {
		t.Errorf("verdict.summary is empty")
	}
	for _, s := range rep.Verdict.Suspects {
		if !addrs[s.Address] {
			t.Errorf("suspect %s is no endpoint", s.Address)
		}
		if s.CI95[0] > s.FailureRate || s.CI95[1] < s.FailureRate || s.P < 0 || s.P > 1 {
			t.Errorf("suspect %s: failure_rate %v, ci95 %v, p %v; inconsistent", s.Address, s.FailureRate, s.CI95, s.P)
		}
	}
}

// suspects returns the addresses the verdict names.
func suspects(rep *fxReport) []string {
	out := []string{}
	for _, s := range rep.Verdict.Suspects {
		out = append(out, s.Address)
	}
	return out
}

func checkVerdict(t *testing.T, rep *fxReport, status string, want ...string) {
	t.Helper()
	t.Logf("verdict: %s", rep.Verdict.Summary)
	if want == nil {
		want = []string{}
	}
	if rep.Verdict.Status != status || !slices.Equal(suspects(rep), want) {
		t.Errorf("verdict %s, suspects %v; want %s, suspects %v\nsummary: %s", rep.Verdict.Status, suspects(rep), status, want, rep.Verdict.Summary)
	}
}

func fxEndpointOf(t *testing.T, rep *fxReport, addr string) *fxEndpoint {
	t.Helper()
	for i := range rep.Endpoints {
		if rep.Endpoints[i].Address == addr {
			return &rep.Endpoints[i]
		}
	}
	t.Fatalf("no endpoint %s in the report", addr)
	return nil
}

// ---------------------------------------------------------------------------
// 1. The seed incident: IPv6 answers nginx 502 pages, IPv4 is healthy

func TestForensicsAllIPv6Fail(t *testing.T) {
	f := startFX(t, "app.test", map[string]fxPolicy{"::1": fxNginx502}, "127.0.0.1", "127.0.0.2", "::1")
	rep, stdout := fxRun(t, fxOpts{samples: 5}, "--resolve", f.resolve(), "--rate", "600", "-n", "240", f.url())
	f.check(t, rep)
	f.checkClient(t, rep)

	checkVerdict(t, rep, "concentrated", "::1")
	if !strings.Contains(rep.Verdict.Summary, "IPv6") {
		t.Errorf("verdict summary does not name IPv6: %q", rep.Verdict.Summary)
	}
	if s := rep.Verdict.Suspects; len(s) == 1 && (s[0].Family != "ipv6" || s[0].FailureRate != 1 || s[0].P >= 1e-9) {
		t.Errorf("suspect %+v; want family ipv6, failure_rate 1, p < 1e-9", s[0])
	}

	v6 := fxEndpointOf(t, rep, "::1")
	if v6.Requests < 40 || v6.Failed != v6.Requests || v6.Status["502"] != v6.Requests {
		t.Fatalf("::1: %d requests, %d failed, status %v; want at least 40, all 502", v6.Requests, v6.Failed, v6.Status)
	}

	// Who answered: one fingerprint, nginx's 502, all on ::1, though every
	// body differed (it names the request and the time).
	if len(rep.Fingerprints) != 1 {
		t.Fatalf("fingerprints %+v; want exactly one", rep.Fingerprints)
	}
	fp := rep.Fingerprints[0]
	if fp.Status != 502 || fp.Server != "nginx/1.22.1" || fp.Producer != "nginx" || fp.Count != v6.Failed ||
		!equalCounts(fp.Addresses, map[string]int64{"::1": v6.Failed}) || fp.BodyHash == "" || !strings.Contains(fp.Body, "502 Bad Gateway") {
		t.Errorf("fingerprint %+v; want 502 from Server nginx/1.22.1 (producer nginx) ×%d on ::1 with its body", fp, v6.Failed)
	}

	// The evidence: request IDs the server saw, the client's and the
	// server's ip:port, the response headers with secrets redacted.
	b6 := f.backend(t, "::1")
	for i, s := range v6.Samples {
		if !sampleFailed(s) {
			t.Errorf("::1 sample %d: status %d; want the 502s only", i, s.Status)
			continue
		}
		if s.RequestID == "" || !b6.sawID(s.RequestID) {
			t.Errorf("::1 sample %d: request_id %q was not seen by the ::1 server", i, s.RequestID)
		}
		if s.Headers["X-Request-Id"] != s.RequestID {
			t.Errorf("::1 sample %d: the echoed X-Request-Id header %q differs from request_id %q", i, s.Headers["X-Request-Id"], s.RequestID)
		}
		if s.Status != 502 || s.Headers["Server"] != "nginx/1.22.1" || !strings.Contains(s.Body, "502 Bad Gateway") {
			t.Errorf("::1 sample %d: status %d, Server %q, body %q; want nginx's 502 page", i, s.Status, s.Headers["Server"], s.Body)
		}
		if !strings.Contains(s.Body, s.RequestID) {
			t.Errorf("::1 sample %d: body does not hold its own request ID %s: %q", i, s.RequestID, s.Body)
		}
		if lp, err := netip.ParseAddrPort(s.Local); err != nil || lp.Addr() != netip.IPv6Loopback() {
			t.Errorf("::1 sample %d: local %q; want [::1]:PORT", i, s.Local)
		}
		for _, h := range []string{"Set-Cookie", "X-Api-Key", "Authorization"} {
			if s.Headers[h] != report.Redacted {
				t.Errorf("::1 sample %d: header %s = %q; want %s", i, h, s.Headers[h], report.Redacted)
			}
		}
	}
	for _, secret := range []string{"fx-set-cookie-secret", "fx-api-key-secret", "fx-authorization-secret"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("the report contains the secret %q", secret)
		}
	}
	// The success sample of a healthy endpoint is evidence too.
	ok4 := fxEndpointOf(t, rep, "127.0.0.1")
	if len(ok4.Samples) != 1 || ok4.Samples[0].Status != 200 || !f.backend(t, "127.0.0.1").sawID(ok4.Samples[0].RequestID) {
		t.Errorf("127.0.0.1 samples %+v; want one 200 whose request ID the server saw", ok4.Samples)
	}
	// A 502 made at once: its time to first byte is recorded for every request.
	if v6.Phases.TTFB.Count != v6.Requests {
		t.Errorf("::1: ttfb phase counted %d of %d requests", v6.Phases.TTFB.Count, v6.Requests)
	}
}

// ---------------------------------------------------------------------------
// 2. One IPv4 address of three fails 20% of the time

func TestForensicsOneAddressFailsOneInFive(t *testing.T) {
	f := startFX(t, "app.test", map[string]fxPolicy{"127.0.0.2": fxEvery(5)}, "127.0.0.1", "127.0.0.2", "::1")
	rep, _ := fxRun(t, fxOpts{samples: 5}, "--resolve", f.resolve(), "--rate", "1200", "-n", "600", f.url())
	f.check(t, rep)
	f.checkClient(t, rep)

	bad := fxEndpointOf(t, rep, "127.0.0.2")
	if want := bad.Requests / 5; bad.Failed != want || bad.Status["503"] != want {
		t.Errorf("127.0.0.2: %d of %d failed (status %v); the server answered 503 to every 5th: want %d", bad.Failed, bad.Requests, bad.Status, want)
	}
	checkVerdict(t, rep, "concentrated", "127.0.0.2")
	if !strings.Contains(rep.Verdict.Summary, "127.0.0.2") {
		t.Errorf("verdict summary does not name 127.0.0.2: %q", rep.Verdict.Summary)
	}
	if len(rep.Fingerprints) != 1 || rep.Fingerprints[0].Status != 503 || rep.Fingerprints[0].Server != "fx-backend/1.0" {
		t.Errorf("fingerprints %+v; want one: 503 from fx-backend/1.0", rep.Fingerprints)
	}
}

// ---------------------------------------------------------------------------
// 3. Every address fails 5%: spread, nobody to blame

func TestForensicsEveryAddressFailsFivePercent(t *testing.T) {
	p := fxEvery(20)
	f := startFX(t, "app.test", map[string]fxPolicy{"127.0.0.1": p, "127.0.0.2": p, "::1": p}, "127.0.0.1", "127.0.0.2", "::1")
	rep, stdout := fxRun(t, fxOpts{samples: 5}, "--resolve", f.resolve(), "--rate", "1200", "-n", "600", f.url())
	f.check(t, rep)

	for _, e := range rep.Endpoints {
		if want := e.Requests / 20; e.Failed != want {
			t.Errorf("%s: %d of %d failed; want every 20th = %d", e.Address, e.Failed, e.Requests, want)
		}
	}
	checkVerdict(t, rep, "spread")
	if !strings.Contains(rep.Verdict.Summary, "spread") {
		t.Errorf("verdict summary does not say the failures are spread: %q", rep.Verdict.Summary)
	}
	if !strings.Contains(stdout, `"suspects": []`) {
		t.Errorf("verdict.suspects is not an empty array in the JSON")
	}
}

// ---------------------------------------------------------------------------
// 4. Healthy: ok, and how sure

var upperBoundRE = regexp.MustCompile(`^0 failures in (\d+) requests: below ([0-9.]+)% with 95% confidence\.$`)

func TestForensicsHealthy(t *testing.T) {
	f := startFX(t, "app.test", nil, "127.0.0.1", "127.0.0.2", "::1")
	rep, _ := fxRun(t, fxOpts{samples: 5}, "--resolve", f.resolve(), "--rate", "900", "-n", "300", f.url())
	f.check(t, rep)
	f.checkClient(t, rep)

	checkVerdict(t, rep, "ok")
	m := upperBoundRE.FindStringSubmatch(rep.Verdict.Summary)
	if m == nil {
		t.Fatalf("verdict summary %q; want \"0 failures in N requests: below X%% with 95%% confidence.\"", rep.Verdict.Summary)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	pct, _ := strconv.ParseFloat(m[2], 64)
	bound := report.UpperBoundZero(n) * 100
	if n != 300 || pct < bound || pct > bound*1.1 {
		t.Errorf("summary says %d requests, below %v%%; want 300, the 95%% bound %.4f%% rounded up", n, pct, bound)
	}
	if len(rep.Fingerprints) != 0 {
		t.Errorf("fingerprints %+v; want none", rep.Fingerprints)
	}
	for _, e := range rep.Endpoints {
		if e.Phases.TTFB.Count != e.Requests || e.Phases.Connect.Count == 0 || e.Phases.TLS.Count != 0 {
			t.Errorf("%s: phases %+v; want ttfb for all %d requests, some connects, no TLS (plain HTTP)", e.Address, e.Phases, e.Requests)
		}
	}
}

// ---------------------------------------------------------------------------
// 5. A slow address: no failure, no suspect, but its latency and TTFB show

func TestForensicsSlowAddress(t *testing.T) {
	slow := func(n int64, r *http.Request) fxAnswer {
		return fxAnswer{status: http.StatusOK, delay: 30 * time.Millisecond}
	}
	f := startFX(t, "app.test", map[string]fxPolicy{"127.0.0.2": slow}, "127.0.0.1", "127.0.0.2", "::1")
	rep, _ := fxRun(t, fxOpts{samples: 5}, "--resolve", f.resolve(), "--rate", "300", "-n", "150", f.url())
	f.check(t, rep)

	checkVerdict(t, rep, "ok")
	s := fxEndpointOf(t, rep, "127.0.0.2")
	if s.LatencyMS.P50 < 30 || s.Phases.TTFB.P50 < 30 {
		t.Errorf("127.0.0.2: latency p50 %vms, ttfb p50 %vms; the server waits 30ms", s.LatencyMS.P50, s.Phases.TTFB.P50)
	}
	for _, a := range []string{"127.0.0.1", "::1"} {
		e := fxEndpointOf(t, rep, a)
		if !(e.LatencyMS.P50*2 < s.LatencyMS.P50) || !(e.Phases.TTFB.P50*2 < s.Phases.TTFB.P50) {
			t.Errorf("%s: latency p50 %vms, ttfb p50 %vms; want well below the slow address's %vms, %vms",
				a, e.LatencyMS.P50, e.Phases.TTFB.P50, s.LatencyMS.P50, s.Phases.TTFB.P50)
		}
	}
}

// ---------------------------------------------------------------------------
// 6. Nothing listens on one address: connection refused

func TestForensicsConnectionRefused(t *testing.T) {
	f := startFX(t, "app.test", nil, "127.0.0.1", "127.0.0.2")
	refused := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.3"), uint16(f.port))
	if c, err := net.DialTimeout("tcp", refused.String(), time.Second); err == nil {
		c.Close()
		t.Skipf("something listens on %s", refused)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Skipf("%s is not refused on this machine: %v", refused, err)
	}
	rep, _ := fxRun(t, fxOpts{samples: 5}, "--resolve", f.resolve("127.0.0.3"), "--rate", "600", "-n", "150", f.url())
	f.check(t, rep)

	e := fxEndpointOf(t, rep, "127.0.0.3")
	if e.Requests == 0 || e.Failed != e.Requests || !equalCounts(e.Errors, map[string]int64{"connect_refused": e.Requests}) {
		t.Fatalf("127.0.0.3: %d requests, %d failed, errors %v; want all connect_refused", e.Requests, e.Failed, e.Errors)
	}
	checkVerdict(t, rep, "concentrated", "127.0.0.3")
	if len(rep.Fingerprints) != 1 || rep.Fingerprints[0].Error != "connect_refused" || rep.Fingerprints[0].Status != 0 ||
		!equalCounts(rep.Fingerprints[0].Addresses, map[string]int64{"127.0.0.3": e.Requests}) {
		t.Errorf("fingerprints %+v; want one, error connect_refused ×%d on 127.0.0.3", rep.Fingerprints, e.Requests)
	}
	for i, s := range e.Samples {
		if s.Class != "connect_refused" || s.Status != 0 || s.Error == "" || s.Remote != "" {
			t.Errorf("127.0.0.3 sample %d: %+v; want class connect_refused, no status, no remote", i, s)
		}
	}
	if e.Phases.TTFB.Count != 0 {
		t.Errorf("127.0.0.3: %d ttfb phases; no response ever came", e.Phases.TTFB.Count)
	}
}

// ---------------------------------------------------------------------------
// 7. DNS changes during the run (--re-resolve)

// timelineIndex is the bucket of at in the report's timeline.
func timelineIndex(t *testing.T, rep *fxReport, at time.Time) int {
	start := fxTime(t, "timeline.start", rep.Timeline.Start)
	return int(at.Sub(start).Seconds() / rep.Timeline.IntervalS)
}

func TestForensicsDNSChangeAddsFailingAddress(t *testing.T) {
	t.Parallel()
	lo4, lo6 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")
	seen := make(chan struct{})
	policies := map[string]fxPolicy{
		"127.0.0.1": func(n int64, r *http.Request) fxAnswer {
			if n == 20 {
				close(seen)
			}
			return fxAnswer{status: http.StatusOK}
		},
		"::1": fxNginx502,
	}
	f := startFX(t, "dyn.test", policies, "127.0.0.1", "::1")
	zone, server := startFXDNS(t, "dyn.test", lo4)
	go func() {
		select {
		case <-seen:
			zone.set(lo4, lo6)
		case <-t.Context().Done():
		}
	}()
	rep, _ := fxRun(t, fxOpts{samples: 5}, "--dns-server", server, "--re-resolve", "1s", "-d", "4s", "--rate", "200", f.url())
	f.check(t, rep)

	if len(rep.DNS) != 1 || len(rep.DNS[0].Changes) != 1 {
		t.Fatalf("dns %+v; want one host with one change", rep.DNS)
	}
	ch := rep.DNS[0].Changes[0]
	if !slices.Equal(ch.Added, []string{"::1"}) || len(ch.Removed) != 0 {
		t.Errorf("dns change %+v; want added [::1], removed []", ch)
	}
	start := fxTime(t, "started_at", rep.StartedAt)
	at := fxTime(t, "dns change at", ch.At)
	if at.Before(start) || at.After(start.Add(2500*time.Millisecond)) {
		t.Errorf("dns change at %s; want within 2.5s of the start %s (--re-resolve 1s)", ch.At, rep.StartedAt)
	}
	if got := endpointAddrsFX(rep); !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Fatalf("endpoints %v; want 127.0.0.1, then the added ::1", got)
	}
	v6 := fxEndpointOf(t, rep, "::1")
	if v6.AddedAt == nil || *v6.AddedAt != ch.At {
		t.Errorf("::1 added_at %v; want the change's time %s", v6.AddedAt, ch.At)
	}
	if v6.RemovedAt != nil || fxEndpointOf(t, rep, "127.0.0.1").AddedAt != nil {
		t.Errorf("unexpected added_at/removed_at marks: %+v", rep.Endpoints)
	}
	if v6.Requests < 20 || v6.Failed != v6.Requests {
		t.Errorf("::1: %d requests, %d failed; want it probed (all 502) after it appeared", v6.Requests, v6.Failed)
	}
	// Not one request to ::1 before DNS named it.
	if arr := f.backend(t, "::1").arrivals(); len(arr) > 0 && arr[0].Before(at.Add(-time.Millisecond)) {
		t.Errorf("::1 received a request at %s, before the DNS change at %s", arr[0].UTC().Format(time.RFC3339Nano), ch.At)
	}
	if i := timelineIndex(t, rep, at.Add(-2*time.Millisecond)); i > 0 {
		for j := 0; j < i && j < len(rep.Timeline.Series[1].Requests); j++ {
			if n := rep.Timeline.Series[1].Requests[j]; n != 0 {
				t.Errorf("::1 timeline bucket %d (before the change) holds %d requests", j, n)
			}
		}
	}
	// The rate is split again, not added: about 200/s in total over 4s.
	if n := rep.Totals.Requests; n < 480 || n > 960 {
		t.Errorf("%d requests in total; want about 800 (200/s for 4s, re-split over the new endpoint)", n)
	}
	checkVerdict(t, rep, "concentrated", "::1")
	if !strings.Contains(rep.Verdict.Summary, "IPv6") {
		t.Errorf("verdict summary does not name IPv6: %q", rep.Verdict.Summary)
	}
}

func endpointAddrsFX(rep *fxReport) []string {
	s := []string{}
	for _, e := range rep.Endpoints {
		s = append(s, e.Address)
	}
	return s
}

func TestForensicsDNSChangeRemovesAddress(t *testing.T) {
	t.Parallel()
	lo4a, lo4b := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	seen := make(chan struct{})
	policies := map[string]fxPolicy{
		"127.0.0.2": func(n int64, r *http.Request) fxAnswer {
			if n == 20 {
				close(seen)
			}
			return fxAnswer{status: http.StatusOK}
		},
	}
	f := startFX(t, "dyn.test", policies, "127.0.0.1", "127.0.0.2")
	zone, server := startFXDNS(t, "dyn.test", lo4a, lo4b)
	go func() {
		select {
		case <-seen:
			zone.set(lo4a)
		case <-t.Context().Done():
		}
	}()
	rep, _ := fxRun(t, fxOpts{samples: 5}, "--dns-server", server, "--re-resolve", "1s", "-d", "3s", "--rate", "200", f.url())
	f.check(t, rep)

	if len(rep.DNS) != 1 || len(rep.DNS[0].Changes) != 1 {
		t.Fatalf("dns %+v; want one host with one change", rep.DNS)
	}
	ch := rep.DNS[0].Changes[0]
	if !slices.Equal(ch.Removed, []string{"127.0.0.2"}) || len(ch.Added) != 0 {
		t.Errorf("dns change %+v; want added [], removed [127.0.0.2]", ch)
	}
	gone := fxEndpointOf(t, rep, "127.0.0.2")
	if gone.RemovedAt == nil || *gone.RemovedAt != ch.At || gone.AddedAt != nil {
		t.Fatalf("127.0.0.2 removed_at %v, added_at %v; want removed at the change's time %s", gone.RemovedAt, gone.AddedAt, ch.At)
	}
	removed := fxTime(t, "removed_at", *gone.RemovedAt)
	if gone.Requests < 20 {
		t.Errorf("127.0.0.2: %d requests; want it probed until it vanished", gone.Requests)
	}
	// Server side: nothing new after the removal; only requests already in
	// flight (at most --concurrency 10) may arrive a moment later.
	var late int
	for _, a := range f.backend(t, "127.0.0.2").arrivals() {
		if a.After(removed.Add(time.Millisecond)) {
			late++
			if a.After(removed.Add(500 * time.Millisecond)) {
				t.Errorf("127.0.0.2 received a request at %s, %s after it was removed at %s",
					a.UTC().Format(time.RFC3339Nano), a.Sub(removed), *gone.RemovedAt)
			}
		}
	}
	if late > 10 {
		t.Errorf("127.0.0.2 received %d requests after it was removed; want at most the 10 in flight", late)
	}
	series := rep.Timeline.Series[1]
	for j := timelineIndex(t, rep, removed.Add(2*time.Millisecond)) + 1; j < len(series.Requests); j++ {
		if series.Requests[j] != 0 {
			t.Errorf("127.0.0.2 timeline bucket %d (after the removal) holds %d requests", j, series.Requests[j])
		}
	}
	// The survivor takes the whole rate: about 100/s before, 200/s after.
	kept := rep.Timeline.Series[0].Requests
	if len(kept) >= 3 && !(float64(kept[2]) >= 1.4*float64(kept[0])) {
		t.Errorf("127.0.0.1 timeline %v; want the last second at about twice the first (the rate re-split)", kept)
	}
	checkVerdict(t, rep, "ok")
}

// ---------------------------------------------------------------------------
// 8. X-Request-Id

func TestForensicsRequestIDs(t *testing.T) {
	t.Run("unique", func(t *testing.T) {
		f := startFX(t, "app.test", map[string]fxPolicy{"::1": fxNginx502}, "127.0.0.1", "127.0.0.2", "::1")
		rep, _ := fxRun(t, fxOpts{samples: 5}, "--resolve", f.resolve(), "--rate", "900", "-n", "450", f.url())
		f.check(t, rep)
		f.mu.Lock()
		first := maps(f.ids)
		noID, multi := f.noID, f.multiID
		f.mu.Unlock()
		if noID != 0 || multi != 0 {
			t.Errorf("%d requests without X-Request-Id, %d with several", noID, multi)
		}
		if len(first) != 450 {
			t.Errorf("%d distinct X-Request-Id for 450 requests", len(first))
		}
		for id, n := range first {
			if n != 1 {
				t.Errorf("X-Request-Id %q sent %d times", id, n)
			}
		}
		for _, e := range rep.Endpoints {
			for _, s := range e.Samples {
				if !f.backend(t, e.Address).sawID(s.RequestID) {
					t.Errorf("%s: sample request_id %q not seen by its server", e.Address, s.RequestID)
				}
			}
		}
		// A second run sends fresh ones.
		fxRun(t, fxOpts{samples: 5}, "--resolve", f.resolve(), "--rate", "900", "-n", "90", f.url())
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.ids) != 540 {
			t.Errorf("two runs of 450 and 90 requests sent %d distinct X-Request-Id; want 540", len(f.ids))
		}
	})

	t.Run("--no-request-id", func(t *testing.T) {
		f := startFX(t, "app.test", map[string]fxPolicy{"127.0.0.2": fxEvery(2)}, "127.0.0.1", "127.0.0.2")
		rep, _ := fxRun(t, fxOpts{samples: 5, noReqID: true}, "--no-request-id", "--resolve", f.resolve(), "--rate", "600", "-n", "60", f.url())
		f.check(t, rep)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.noID != 60 || len(f.ids) != 0 {
			t.Errorf("servers saw %d requests without X-Request-Id and ids %v; want 60 and none", f.noID, f.ids)
		}
		for _, e := range rep.Endpoints {
			for _, s := range e.Samples {
				if s.RequestID != "" {
					t.Errorf("%s: sample request_id %q with --no-request-id", e.Address, s.RequestID)
				}
			}
		}
	})

	for _, args := range [][]string{
		{"-H", "X-Request-Id: mine"},
		{"-H", "x-request-id: mine"},
		{"--no-request-id", "-H", "X-Request-Id: mine"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			f := startFX(t, "app.test", map[string]fxPolicy{"127.0.0.2": fxEvery(2)}, "127.0.0.1", "127.0.0.2")
			rep, _ := fxRun(t, fxOpts{samples: 5, noReqID: true},
				append(args, "--resolve", f.resolve(), "--rate", "600", "-n", "60", f.url())...)
			f.check(t, rep)
			f.mu.Lock()
			ids, noID, multi := maps(f.ids), f.noID, f.multiID
			f.mu.Unlock()
			if !equalInts(ids, map[string]int{"mine": 60}) || noID != 0 || multi != 0 {
				t.Errorf("servers saw X-Request-Id %v (%d without, %d with several); want \"mine\" on all 60", ids, noID, multi)
			}
		})
	}

	// A sample names the request ID that was sent, whoever chose it: the
	// provider's logs hold "mine", so must the report.
	t.Run("samples record a user X-Request-Id", func(t *testing.T) {
		f := startFX(t, "app.test", map[string]fxPolicy{"127.0.0.2": fxEvery(2)}, "127.0.0.1", "127.0.0.2")
		rep, _ := fxRun(t, fxOpts{samples: 5, noReqID: true}, "-H", "X-Request-Id: mine", "--resolve", f.resolve(),
			"--rate", "600", "-n", "60", f.url())
		for _, e := range rep.Endpoints {
			for i, s := range e.Samples {
				if s.RequestID != "mine" {
					t.Errorf("%s sample %d: request_id %q; the request was sent with X-Request-Id: mine", e.Address, i, s.RequestID)
				}
			}
		}
	})
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func equalInts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// 9. --samples

func TestForensicsSamples(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	policies := map[string]fxPolicy{
		"127.0.0.2": fxEvery(3),
		"::1": func(n int64, r *http.Request) fxAnswer {
			return fxAnswer{status: http.StatusBadGateway, body: big}
		},
	}
	f := startFX(t, "app.test", policies, "127.0.0.1", "127.0.0.2", "::1")

	t.Run("2", func(t *testing.T) {
		rep, _ := fxRun(t, fxOpts{samples: 2}, "--samples", "2", "--resolve", f.resolve(), "--rate", "900", "-n", "180", f.url())
		want := map[string][2]int{"127.0.0.1": {0, 1}, "127.0.0.2": {2, 1}, "::1": {2, 0}} // failed, ok
		for _, e := range rep.Endpoints {
			var got [2]int
			for _, s := range e.Samples {
				if sampleFailed(s) {
					got[0]++
				} else {
					got[1]++
				}
			}
			if got != want[e.Address] {
				t.Errorf("%s: %d failed + %d ok samples; want %d + %d", e.Address, got[0], got[1], want[e.Address][0], want[e.Address][1])
			}
		}
		// The body is kept to its first 512 bytes; it is still read whole.
		v6 := fxEndpointOf(t, rep, "::1")
		for i, s := range v6.Samples {
			if s.Body != big[:512] {
				t.Errorf("::1 sample %d: body of %d bytes; want the first 512 of the 64 KiB page", i, len(s.Body))
			}
		}
		if v6.Bytes != v6.Requests*int64(len(big)) {
			t.Errorf("::1: %d bytes for %d requests; want %d each", v6.Bytes, v6.Requests, len(big))
		}
	})

	t.Run("0", func(t *testing.T) {
		rep, _ := fxRun(t, fxOpts{samples: 0}, "--samples", "0", "--resolve", f.resolve(), "--rate", "900", "-n", "90", f.url())
		for _, e := range rep.Endpoints {
			if len(e.Samples) != 0 {
				t.Errorf("%s: %d samples with --samples 0", e.Address, len(e.Samples))
			}
		}
		if len(rep.Fingerprints) != 2 {
			t.Errorf("fingerprints %+v; want the 503 and the 502 grouped even without samples", rep.Fingerprints)
		}
	})
}

// ---------------------------------------------------------------------------
// 10. Timeline

func TestForensicsTimeline(t *testing.T) {
	f := startFX(t, "app.test", map[string]fxPolicy{"::1": fxEvery(4)}, "127.0.0.1", "::1")
	common := []string{"--resolve", f.resolve(), "--rate", "300", f.url()}

	def, _ := fxRun(t, fxOpts{samples: 5}, append([]string{"-d", "700ms"}, common...)...)
	if def.Timeline.IntervalS != 1 {
		t.Errorf("interval_s = %v by default; want 1", def.Timeline.IntervalS)
	}
	fine, _ := fxRun(t, fxOpts{samples: 5}, append([]string{"-d", "700ms", "--interval", "100ms"}, common...)...)
	if fine.Timeline.IntervalS != 0.1 {
		t.Errorf("interval_s = %v with --interval 100ms; want 0.1", fine.Timeline.IntervalS)
	}
	nDef, nFine := len(def.Timeline.Series[0].Requests), len(fine.Timeline.Series[0].Requests)
	if nFine < 6 || nFine <= nDef {
		t.Errorf("--interval 100ms gave %d buckets for 700ms (default: %d); want at least 6", nFine, nDef)
	}
	for i, s := range fine.Timeline.Series {
		for j := 0; j < 6 && j < len(s.Requests); j++ {
			if s.Requests[j] == 0 {
				t.Errorf("series %d (%s): bucket %d is empty in a steady 150/s stream: %v", i, s.Address, j, s.Requests)
			}
		}
	}
	// A long planned run gets wider buckets (at most ~300 of them): 10m -> 2s.
	long, _ := fxRun(t, fxOpts{samples: 5}, append([]string{"-d", "10m", "-n", "30"}, common...)...)
	if long.Timeline.IntervalS != 2 {
		t.Errorf("interval_s = %v for a planned 10m run; want 2 (at most 300 buckets)", long.Timeline.IntervalS)
	}
}

// ---------------------------------------------------------------------------
// Arrays are arrays: a script iterates them without a null check

func TestForensicsJSONArraysNeverNull(t *testing.T) {
	f := startFX(t, "app.test", nil, "127.0.0.1")
	_, stdout := fxRun(t, fxOpts{samples: 0}, "--samples", "0", "--resolve", f.resolve(), "--rate", "300", "-n", "10", f.url())
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	isArray := func(scope string, v any, ok bool) {
		t.Helper()
		if _, isA := v.([]any); !ok || !isA {
			t.Errorf("%s = %v; want an array ([] when empty)", scope, v)
		}
	}
	get := func(m any, k string) (any, bool) {
		mm, _ := m.(map[string]any)
		v, ok := mm[k]
		return v, ok
	}
	for _, k := range []string{"fingerprints", "endpoints", "dns"} {
		v, ok := get(m, k)
		isArray(k, v, ok)
	}
	tl, _ := get(m, "timeline")
	v, ok := get(tl, "series")
	isArray("timeline.series", v, ok)
	vd, _ := get(m, "verdict")
	v, ok = get(vd, "suspects")
	isArray("verdict.suspects", v, ok)
	cl, _ := get(m, "client")
	for _, k := range []string{"ports", "local_addresses"} {
		v, ok := get(cl, k)
		isArray("client."+k, v, ok)
	}
	ds, _ := get(m, "dns")
	for i, d := range ds.([]any) {
		for _, k := range []string{"addresses", "changes"} {
			v, ok := get(d, k)
			isArray(fmt.Sprintf("dns[%d].%s", i, k), v, ok)
		}
	}
	es, _ := get(m, "endpoints")
	for i, e := range es.([]any) {
		v, ok := get(e, "samples")
		isArray(fmt.Sprintf("endpoints[%d].samples", i), v, ok)
	}
}

// An address that vanishes and comes back gets a new endpoint, so the
// report keeps each appearance apart; nothing is sent to it in between.
func TestForensicsDNSAddressComesBack(t *testing.T) {
	t.Parallel()
	lo4a, lo4b := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	seen := make(chan struct{})
	policies := map[string]fxPolicy{
		"127.0.0.2": func(n int64, r *http.Request) fxAnswer {
			if n == 20 {
				close(seen)
			}
			return fxAnswer{status: http.StatusOK}
		},
	}
	f := startFX(t, "dyn.test", policies, "127.0.0.1", "127.0.0.2")
	zone, server := startFXDNS(t, "dyn.test", lo4a, lo4b)
	go func() {
		select {
		case <-seen: // one re-resolution without 127.0.0.2, then with it again
			zone.play([]netip.Addr{lo4a}, []netip.Addr{lo4a, lo4b})
		case <-t.Context().Done():
		}
	}()
	rep, _ := fxRun(t, fxOpts{samples: 5}, "--dns-server", server, "--re-resolve", "1s", "-d", "3s", "--rate", "200", f.url())
	f.check(t, rep)

	if len(rep.DNS) != 1 || len(rep.DNS[0].Changes) != 2 {
		t.Fatalf("dns %+v; want one host with two changes", rep.DNS)
	}
	gone, back := rep.DNS[0].Changes[0], rep.DNS[0].Changes[1]
	if !slices.Equal(gone.Removed, []string{"127.0.0.2"}) || len(gone.Added) != 0 ||
		!slices.Equal(back.Added, []string{"127.0.0.2"}) || len(back.Removed) != 0 {
		t.Fatalf("dns changes %+v; want 127.0.0.2 removed, then added", rep.DNS[0].Changes)
	}
	// The address that comes back gets its old endpoint back (memory stays
	// flat however DNS rotates): it is in DNS again, so it has no removed_at.
	if got := endpointAddrsFX(rep); !slices.Equal(got, []string{"127.0.0.1", "127.0.0.2"}) {
		t.Fatalf("endpoints %v; want 127.0.0.1 and 127.0.0.2, once each", got)
	}
	ep := rep.Endpoints[1]
	if ep.AddedAt == nil || *ep.AddedAt != back.At || ep.RemovedAt != nil {
		t.Errorf("127.0.0.2: added_at %v, removed_at %v; want added at %s and not removed", ep.AddedAt, ep.RemovedAt, back.At)
	}
	before, after := 0, 0
	for _, a := range f.backend(t, "127.0.0.2").arrivals() {
		switch {
		case a.Before(fxTime(t, "removed", gone.At)):
			before++
		case a.After(fxTime(t, "added", back.At)):
			after++
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("127.0.0.2: %d requests before it vanished, %d after it came back; want both > 0", before, after)
	}
	removed, added := fxTime(t, "removed", gone.At), fxTime(t, "added", back.At)
	var late int
	for _, a := range f.backend(t, "127.0.0.2").arrivals() {
		if a.After(removed.Add(time.Millisecond)) && a.Before(added.Add(-time.Millisecond)) {
			late++
			if a.After(removed.Add(500 * time.Millisecond)) {
				t.Errorf("127.0.0.2 received a request at %s while it was out of DNS (%s .. %s)",
					a.UTC().Format(time.RFC3339Nano), gone.At, back.At)
			}
		}
	}
	if late > 10 {
		t.Errorf("127.0.0.2 received %d requests while out of DNS; want at most the 10 in flight", late)
	}
	checkVerdict(t, rep, "ok")
}

// A failed re-resolution (here: no address at all) changes nothing: a DNS
// hiccup must not stop the probing of addresses that still answer.
func TestForensicsDNSFailureChangesNothing(t *testing.T) {
	t.Parallel()
	lo4a, lo4b := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	seen := make(chan struct{})
	var queriesAtSwitch atomic.Int64
	queriesAtSwitch.Store(math.MaxInt64)
	policies := map[string]fxPolicy{
		"127.0.0.1": func(n int64, r *http.Request) fxAnswer {
			if n == 20 {
				close(seen)
			}
			return fxAnswer{status: http.StatusOK}
		},
	}
	f := startFX(t, "dyn.test", policies, "127.0.0.1", "127.0.0.2")
	zone, server := startFXDNS(t, "dyn.test", lo4a, lo4b)
	go func() {
		select {
		case <-seen:
			zone.set()
			queriesAtSwitch.Store(zone.aQueries.Load())
		case <-t.Context().Done():
		}
	}()
	rep, _ := fxRun(t, fxOpts{samples: 5}, "--dns-server", server, "--re-resolve", "1s", "-d", "2500ms", "--rate", "200", f.url())
	f.check(t, rep)
	if zone.aQueries.Load() <= queriesAtSwitch.Load() {
		t.Fatalf("no re-resolution after the DNS answer emptied (%d A queries)", zone.aQueries.Load())
	}
	if len(rep.DNS) != 1 || len(rep.DNS[0].Changes) != 0 || !slices.Equal(rep.DNS[0].Addresses, []string{"127.0.0.1", "127.0.0.2"}) {
		t.Errorf("dns %+v; want no change, both addresses", rep.DNS)
	}
	for i, e := range rep.Endpoints {
		if e.RemovedAt != nil || e.AddedAt != nil {
			t.Errorf("%s: added_at %v, removed_at %v; want neither", e.Address, e.AddedAt, e.RemovedAt)
		}
		if s := rep.Timeline.Series[i].Requests; len(s) < 3 || s[2] == 0 {
			t.Errorf("%s: timeline %v; want requests until the end", e.Address, s)
		}
	}
	checkVerdict(t, rep, "ok")
}

// Fresh and reused connections are told apart, per endpoint and per
// fingerprint; --new-conn makes every request fresh.
func TestForensicsConnectionReuse(t *testing.T) {
	f := startFX(t, "app.test", map[string]fxPolicy{"::1": fxNginx502}, "127.0.0.1", "::1")
	for _, newConn := range []bool{false, true} {
		args := []string{"--resolve", f.resolve(), "--rate", "400", "-n", "120", f.url()}
		if newConn {
			args = append([]string{"--new-conn"}, args...)
		}
		rep, _ := fxRun(t, fxOpts{samples: 5}, args...)
		for _, e := range rep.Endpoints {
			fresh, reused := e.Connections["fresh"], e.Connections["reused"]
			switch {
			case newConn && (reused.Requests != 0 || fresh.Requests != e.Requests || e.Phases.Connect.Count != e.Requests):
				t.Errorf("--new-conn: %s: connections %+v, %d connect phases; want all %d fresh, each with its connect",
					e.Address, e.Connections, e.Phases.Connect.Count, e.Requests)
			case !newConn && (reused.Requests == 0 || fresh.Requests == 0 || fresh.Requests > 10):
				t.Errorf("keep-alive: %s: connections %+v; want a few fresh (at most -c 10), the rest reused", e.Address, e.Connections)
			}
			for _, s := range e.Samples {
				if newConn && s.Reused {
					t.Errorf("--new-conn: %s: a sample on a reused connection", e.Address)
				}
			}
		}
		if len(rep.Fingerprints) != 1 {
			t.Fatalf("fingerprints %+v; want the 502 only", rep.Fingerprints)
		}
		fp := rep.Fingerprints[0]
		if newConn && fp.Reused != 0 || !newConn && fp.Reused == 0 {
			t.Errorf("new-conn %v: fingerprint fresh %d, reused %d", newConn, fp.Fresh, fp.Reused)
		}
		checkVerdict(t, rep, "concentrated", "::1")
	}
}
