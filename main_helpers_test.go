package main

// Helpers shared by every test of package main: running pinprobe through
// run(), HTTP servers on one port of several loopback addresses, a DNS
// server, and the JSON report as a script decodes it, with the invariants
// every report must keep.

import (
	"bytes"
	"context"
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
// Running pinprobe

// runTimeout bounds every run() of these tests: a hung run is cancelled and
// then fails on its exit code instead of hanging the test binary.
const runTimeout = 30 * time.Second

// runOutcome is what one run() returned and wrote.
type runOutcome struct {
	args           []string
	code           int
	stdout, stderr string
	panicked       any // the value of a panic in run, recovered; nil if none
}

// runCaptured calls run with ctx and args, capturing its outputs and a panic.
// It does not touch a testing.T, so it may run on any goroutine.
func runCaptured(ctx context.Context, args []string) (o runOutcome) {
	var out, errOut bytes.Buffer
	o.args = args
	defer func() {
		o.panicked = recover()
		o.stdout, o.stderr = out.String(), errOut.String()
	}()
	o.code = run(ctx, args, &out, &errOut)
	return o
}

// noPanic fails the test with the arguments that made run panic.
func (o runOutcome) noPanic(t *testing.T) {
	t.Helper()
	if o.panicked != nil {
		t.Fatalf("pinprobe %s: panic: %v", strings.Join(o.args, " "), o.panicked)
	}
}

// pinprobe runs the command through run() and returns its exit code, stdout
// and stderr. A panic fails the test with the arguments that caused it.
func pinprobe(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	o := runCaptured(ctx, args)
	o.noPanic(t)
	return o.code, o.stdout, o.stderr
}

// goPinprobe runs the command through run() on its own goroutine, with ctx
// (for tests that interrupt it), and delivers the outcome when run returns.
// The receiver checks it with noPanic.
func goPinprobe(ctx context.Context, args ...string) <-chan runOutcome {
	done := make(chan runOutcome, 1)
	go func() { done <- runCaptured(ctx, args) }()
	return done
}

// ---------------------------------------------------------------------------
// HTTP servers on one port of several loopback addresses

// answer is what a backend answers to one request.
type answer struct {
	status int
	delay  time.Duration // before answering; cut short when the request is cancelled
	header map[string]string
	body   string // "ADDRESS answers STATUS" when empty
}

// policy decides a backend's answer to its n-th request (from 1).
type policy func(n int64, r *http.Request) answer

// answerOK answers 200.
func answerOK(n int64, r *http.Request) answer { return answer{status: http.StatusOK} }

// answerStatus answers status to every request.
func answerStatus(status int) policy {
	return func(n int64, r *http.Request) answer { return answer{status: status} }
}

// delayed answers 200 after d.
func delayed(d time.Duration) policy {
	return func(n int64, r *http.Request) answer { return answer{status: http.StatusOK, delay: d} }
}

// nginx502 is nginx's own 502 page; the body names the request, so it
// differs on every request and only normalisation groups it.
func nginx502(n int64, r *http.Request) answer {
	return answer{
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

// every answers 503 to every k-th request of the backend and 200 otherwise.
func every(k int64) policy {
	return func(n int64, r *http.Request) answer {
		if n%k == 0 {
			return answer{status: http.StatusServiceUnavailable, header: map[string]string{"Server": "fx-backend/1.0"}}
		}
		return answer{status: http.StatusOK}
	}
}

// fleet is a set of HTTP servers on one port of several loopback addresses.
// Every server counts the requests it handles and checks, server side, that
// each arrived on its own address with the Host header of the probed URL;
// it records every X-Request-Id, arrival time and client address.
type fleet struct {
	host     string // host name the requests must carry
	port     int
	backends []*backend

	total    atomic.Int64
	notifyAt int64         // close reached when total hits this; 0 = never
	reached  chan struct{} // closed at the notifyAt-th request
	hold     bool          // requests from the notifyAt-th on wait for release
	release  chan struct{}
	once     sync.Once

	mu      sync.Mutex
	ids     map[string]int // every X-Request-Id value seen, over all backends
	noID    int            // requests without X-Request-Id
	multiID int            // requests with more than one X-Request-Id
	ports   map[int]bool   // client ports seen (the servers' remote ports)
	ips     map[string]bool
}

type backend struct {
	f      *fleet
	addr   netip.Addr
	policy policy

	n        atomic.Int64 // requests handled
	inFlight atomic.Int64
	misplace atomic.Int64 // requests that arrived on another address or with another Host
	mu       sync.Mutex
	ids      map[string]bool
	times    []time.Time // arrival of every request
}

// fleetOpts configure startFleet.
type fleetOpts struct {
	host     string            // Host header expected; "app.test" when empty
	policies map[string]policy // answers per address
	each     policy            // answers of the addresses without a policy; answerOK when nil
	notifyAt int64             // see fleet.reached
	hold     bool              // see fleet.hold
}

// startFleet starts one server per host, all on the same port. It skips the
// test where an address is missing (see listenPort).
func startFleet(t *testing.T, o fleetOpts, hosts ...string) *fleet {
	t.Helper()
	if o.host == "" {
		o.host = "app.test"
	}
	if o.each == nil {
		o.each = answerOK
	}
	port, lns := listenPort(t, hosts...)
	f := &fleet{host: o.host, port: port, notifyAt: o.notifyAt, reached: make(chan struct{}),
		hold: o.hold, release: make(chan struct{}),
		ids: map[string]int{}, ports: map[int]bool{}, ips: map[string]bool{}}
	for _, ln := range lns {
		b := &backend{f: f, addr: ln.Addr().(*net.TCPAddr).AddrPort().Addr().Unmap(), ids: map[string]bool{}}
		b.policy = o.policies[b.addr.String()]
		if b.policy == nil {
			b.policy = o.each
		}
		srv := httptest.NewUnstartedServer(b)
		srv.Listener.Close()
		srv.Listener = ln
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.Start()
		t.Cleanup(srv.Close)
		f.backends = append(f.backends, b)
	}
	t.Cleanup(f.releaseHeld) // runs before the servers' Close, which waits for held requests
	return f
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	f := b.f
	n := b.n.Add(1)
	b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	local, _ := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if local == nil || local.AddrPort().Addr().Unmap() != b.addr || r.Host != net.JoinHostPort(f.host, strconv.Itoa(f.port)) {
		b.misplace.Add(1)
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

	total := f.total.Add(1)
	if total == f.notifyAt {
		close(f.reached)
	}
	if f.hold && f.notifyAt > 0 && total >= f.notifyAt {
		select {
		case <-f.release:
		case <-r.Context().Done():
		}
	}
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

// releaseHeld lets the held requests (see fleetOpts.hold) be answered.
func (f *fleet) releaseHeld() { f.once.Do(func() { close(f.release) }) }

// hits returns the server-side request count of every address.
func (f *fleet) hits() map[string]int64 {
	m := map[string]int64{}
	for _, b := range f.backends {
		m[b.addr.String()] = b.n.Load()
	}
	return m
}

// url is the probed URL of the fleet.
func (f *fleet) url() string { return fmt.Sprintf("http://%s:%d/", f.host, f.port) }

// resolve is the --resolve value that maps the fleet's host to its
// addresses, plus extra ones.
func (f *fleet) resolve(extra ...string) string {
	var addrs []string
	for _, b := range f.backends {
		addrs = append(addrs, b.addr.String())
	}
	return fmt.Sprintf("%s:%d:%s", f.host, f.port, strings.Join(append(addrs, extra...), ","))
}

func (f *fleet) backend(t *testing.T, addr string) *backend {
	t.Helper()
	for _, b := range f.backends {
		if b.addr.String() == addr {
			return b
		}
	}
	t.Fatalf("no backend %s", addr)
	return nil
}

func (b *backend) sawID(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ids[id]
}

// arrivals returns the arrival times of the backend's requests.
func (b *backend) arrivals() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.times)
}

// checkPlacement fails the test if any request reached a server on the wrong
// address or with the wrong Host header.
func (f *fleet) checkPlacement(t *testing.T) {
	t.Helper()
	for _, b := range f.backends {
		if n := b.misplace.Load(); n != 0 {
			t.Errorf("server %s: %d requests arrived on another address or with a Host other than %s:%d", b.addr, n, f.host, f.port)
		}
	}
}

// compareHits fails unless the server-side count of every address equals
// the report's requests for it (summed over the endpoints of the address:
// one that comes back gets a new endpoint), and unless the report's other
// requests all went to unserved addresses, where no server listens.
func (f *fleet) compareHits(t *testing.T, rep *jsonReport, unserved ...string) {
	t.Helper()
	got := map[string]int64{}
	for _, e := range rep.Endpoints {
		got[e.Address] += e.Requests
	}
	for _, a := range unserved {
		delete(got, a)
	}
	if want := f.hits(); !equalCounts(got, want) {
		t.Errorf("requests per address: report %v; servers counted %v", got, want)
	}
}

// check is checkPlacement and compareHits.
func (f *fleet) check(t *testing.T, rep *jsonReport, unserved ...string) {
	t.Helper()
	f.checkPlacement(t)
	f.compareHits(t, rep, unserved...)
}

// checkClient compares the report's client section with what the servers
// saw: the same local addresses and the same set of ports. Only valid when
// every request reached a server.
func (f *fleet) checkClient(t *testing.T, rep *jsonReport) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var want []netip.Addr
	for ip := range f.ips {
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

// listenPort binds one TCP port on every host: a free port on the first,
// then the same port on the others, starting over with a new port when one
// is taken there. It skips the test when the machine lacks an address
// (127.0.0.2 on macOS, ::1 without IPv6).
func listenPort(t *testing.T, hosts ...string) (int, []net.Listener) {
	t.Helper()
	var lastErr error
	for range 50 {
		first, err := net.Listen("tcp", net.JoinHostPort(hosts[0], "0"))
		if err != nil {
			t.Fatalf("listen on %s: %v", hosts[0], err)
		}
		port := first.Addr().(*net.TCPAddr).Port
		lns := []net.Listener{first}
		retry := false
		for _, h := range hosts[1:] {
			ln, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(port)))
			if err == nil {
				lns = append(lns, ln)
				continue
			}
			for _, l := range lns {
				l.Close()
			}
			if !errors.Is(err, syscall.EADDRINUSE) {
				t.Skipf("this machine cannot listen on %s: %v", h, err)
			}
			retry, lastErr = true, err
			break
		}
		if !retry {
			return port, lns
		}
	}
	t.Fatalf("no port free on all of %v: %v", hosts, lastErr)
	return 0, nil
}

// hasIPv6Loopback reports whether this machine can listen on [::1].
func hasIPv6Loopback() bool {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// ---------------------------------------------------------------------------
// A DNS server on loopback, whose answers may change during a run

// dnsZone is the table a test DNS server answers A and AAAA queries from;
// every other name is NXDOMAIN.
type dnsZone struct {
	mu       sync.Mutex
	names    map[string][]netip.Addr   // by lower-case FQDN
	scripts  map[string][][]netip.Addr // answers of a name's next A queries, in turn; the last one stays
	mute     bool                      // read the queries and answer none
	aQueries atomic.Int64              // A queries answered for a name of the table
	queried  chan struct{}             // closed at the first query
	once     sync.Once
}

// startDNS starts a DNS server on 127.0.0.1 that answers from records and
// returns its zone and the --dns-server value "127.0.0.1:PORT".
func startDNS(t *testing.T, records map[string][]netip.Addr) (*dnsZone, string) {
	t.Helper()
	z := &dnsZone{names: map[string][]netip.Addr{}, scripts: map[string][][]netip.Addr{}, queried: make(chan struct{})}
	for name, addrs := range records {
		z.names[fqdn(name)] = addrs
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("dns: listen: %v", err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(z.serve)}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return z, pc.LocalAddr().String()
}

func fqdn(name string) string { return dns.Fqdn(strings.ToLower(name)) }

func (z *dnsZone) serve(w dns.ResponseWriter, q *dns.Msg) {
	z.once.Do(func() { close(z.queried) })
	m := new(dns.Msg)
	m.SetReply(q)
	m.Authoritative = true
	if len(q.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		w.WriteMsg(m)
		return
	}
	qq := q.Question[0]
	name := strings.ToLower(qq.Name)
	z.mu.Lock()
	if z.mute {
		z.mu.Unlock()
		return
	}
	addrs, ok := z.names[name]
	if ok && qq.Qtype == dns.TypeA {
		z.aQueries.Add(1)
		if s := z.scripts[name]; len(s) > 0 {
			addrs, z.scripts[name] = s[0], s[1:]
			z.names[name] = addrs
		}
	}
	addrs = slices.Clone(addrs)
	z.mu.Unlock()
	if !ok {
		m.Rcode = dns.RcodeNameError
		w.WriteMsg(m)
		return
	}
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
}

// set makes every answer for name from now on addrs (none: an empty answer).
func (z *dnsZone) set(name string, addrs ...netip.Addr) {
	z.mu.Lock()
	z.names[fqdn(name)] = addrs
	delete(z.scripts, fqdn(name))
	z.mu.Unlock()
}

// play makes each of the next A queries for name switch the answer to the
// next set: one resolution per set (pinprobe sends one A query per
// resolution).
func (z *dnsZone) play(name string, sets ...[]netip.Addr) {
	z.mu.Lock()
	z.scripts[fqdn(name)] = sets
	z.mu.Unlock()
}

// silence makes the server read every query and answer none.
func (z *dnsZone) silence() {
	z.mu.Lock()
	z.mute = true
	z.mu.Unlock()
}

// ---------------------------------------------------------------------------
// The JSON report as a user's script sees it (deliberately not report.Report)

type jsonReport struct {
	Schema       string               `json:"schema"`
	Version      string               `json:"version"`
	Command      []string             `json:"command"`
	StartedAt    string               `json:"started_at"`
	EndedAt      string               `json:"ended_at"`
	DurationS    float64              `json:"duration_s"`
	SendS        float64              `json:"send_s"`
	Interrupted  bool                 `json:"interrupted"`
	DNS          []jsonDNS            `json:"dns"`
	Totals       jsonStats            `json:"totals"`
	Families     map[string]jsonStats `json:"families"`
	Endpoints    []jsonEndpoint       `json:"endpoints"`
	Fingerprints []jsonFingerprint    `json:"fingerprints"`
	Timeline     jsonTimeline         `json:"timeline"`
	Client       jsonClient           `json:"client"`
	Verdict      jsonVerdict          `json:"verdict"`
	Thresholds   []jsonThreshold      `json:"thresholds"`
}

type jsonThreshold struct {
	Name   string   `json:"name"`
	Scope  string   `json:"scope"`
	Limit  float64  `json:"limit"`
	Unit   string   `json:"unit"`
	Value  *float64 `json:"value"`
	Status string   `json:"status"`
	OK     bool     `json:"ok"`
}

type jsonDNS struct {
	Host      string       `json:"host"`
	Port      int          `json:"port"`
	Source    string       `json:"source"`
	Addresses []string     `json:"addresses"`
	Error     string       `json:"error"`
	Changes   []jsonChange `json:"changes"`
}

type jsonChange struct {
	At      string   `json:"at"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

type jsonStats struct {
	Requests    int64            `json:"requests"`
	OK          int64            `json:"ok"`
	Failed      int64            `json:"failed"`
	FailureRate float64          `json:"failure_rate"`
	Dropped     int64            `json:"dropped"`
	RPS         float64          `json:"rps"`
	Status      map[string]int64 `json:"status"`
	Errors      map[string]int64 `json:"errors"`
	LatencyMS   struct {
		Min  float64 `json:"min"`
		Mean float64 `json:"mean"`
		P50  float64 `json:"p50"`
		P90  float64 `json:"p90"`
		P99  float64 `json:"p99"`
		P999 float64 `json:"p999"`
		Max  float64 `json:"max"`
	} `json:"latency_ms"`
	HDR string `json:"hdr"`
}

type jsonEndpoint struct {
	jsonStats
	Bytes       int64                    `json:"bytes"`
	Target      string                   `json:"target"`
	Host        string                   `json:"host"`
	Address     string                   `json:"address"`
	Port        int                      `json:"port"`
	Family      string                   `json:"family"`
	AddedAt     *string                  `json:"added_at"`
	RemovedAt   *string                  `json:"removed_at"`
	Phases      jsonPhases               `json:"phases_ms"`
	Connections map[string]jsonConnStats `json:"connections"`
	Samples     []jsonSample             `json:"samples"`
}

type jsonPhase struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

type jsonPhases struct {
	Connect jsonPhase `json:"connect"`
	TLS     jsonPhase `json:"tls"`
	TTFB    jsonPhase `json:"ttfb"`
}

type jsonConnStats struct {
	Requests int64 `json:"requests"`
	Failed   int64 `json:"failed"`
}

type jsonSample struct {
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

type jsonFingerprint struct {
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

type jsonTimeline struct {
	IntervalS float64      `json:"interval_s"`
	Start     string       `json:"start"`
	Series    []jsonSeries `json:"series"`
}

type jsonSeries struct {
	Address  string  `json:"address"`
	Target   string  `json:"target"`
	Requests []int64 `json:"requests"`
	Failed   []int64 `json:"failed"`
}

type jsonClient struct {
	LocalAddresses []string `json:"local_addresses"`
	Ports          []int    `json:"ports"`
	PortsCount     int      `json:"ports_count"`
	PortMin        int      `json:"port_min"`
	PortMax        int      `json:"port_max"`
}

type jsonVerdict struct {
	Status   string        `json:"status"`
	Summary  string        `json:"summary"`
	Suspects []jsonSuspect `json:"suspects"`
}

type jsonSuspect struct {
	Address     string     `json:"address"`
	Target      string     `json:"target"`
	Family      string     `json:"family"`
	Requests    int64      `json:"requests"`
	Failed      int64      `json:"failed"`
	FailureRate float64    `json:"failure_rate"`
	CI95        [2]float64 `json:"ci95"`
	P           float64    `json:"p"`
}

// decodeReport decodes a JSON report and checks that every key of the
// contract this issue covers is present, at every level.
func decodeReport(t *testing.T, b []byte) *jsonReport {
	t.Helper()
	var rep jsonReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, b)
	}
	var typed report.Report
	if err := json.Unmarshal(b, &typed); err != nil {
		t.Fatalf("decode report as report.Report: %v", err)
	}
	if err := report.Validate(&typed); err != nil {
		t.Errorf("the report breaks its invariants: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("decode report: %v", err)
	}
	requireKeys(t, "report", raw, "schema", "version", "command", "started_at", "ended_at", "duration_s",
		"interrupted", "dns", "totals", "families", "endpoints")
	requireStatsKeys(t, "totals", raw["totals"])
	fams, _ := raw["families"].(map[string]any)
	for name, s := range fams {
		requireStatsKeys(t, "families."+name, s)
	}
	eps, _ := raw["endpoints"].([]any)
	for i, e := range eps {
		scope := fmt.Sprintf("endpoints[%d]", i)
		requireStatsKeys(t, scope, e)
		m, _ := e.(map[string]any)
		requireKeys(t, scope, m, "target", "host", "address", "port", "family")
	}
	ds, _ := raw["dns"].([]any)
	for i, d := range ds {
		m, _ := d.(map[string]any)
		requireKeys(t, fmt.Sprintf("dns[%d]", i), m, "host", "source", "addresses")
	}
	return &rep
}

func requireStatsKeys(t *testing.T, scope string, v any) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s: not an object: %v", scope, v)
		return
	}
	requireKeys(t, scope, m, "requests", "ok", "failed", "failure_rate", "dropped", "status", "errors", "latency_ms", "hdr")
	lat, _ := m["latency_ms"].(map[string]any)
	requireKeys(t, scope+".latency_ms", lat, "min", "mean", "p50", "p90", "p99", "p999", "max")
}

func requireKeys(t *testing.T, scope string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: no %q key", scope, k)
		}
	}
}

var jsonTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// checkReport asserts the invariants every report must keep: timestamps,
// requests == ok + failed at every level, consistent failure rates,
// percentiles in order, histograms that decode to the request count, and
// endpoint sums equal to family sums equal to totals.
func checkReport(t *testing.T, rep *jsonReport) {
	t.Helper()
	if rep.Schema != "pinprobe.report/v1" {
		t.Errorf("schema = %q; want pinprobe.report/v1", rep.Schema)
	}
	if rep.Version != version {
		t.Errorf("version = %q; want %q", rep.Version, version)
	}
	if len(rep.Command) == 0 || rep.Command[0] != "pinprobe" {
		t.Errorf("command = %q; want it to start with pinprobe", rep.Command)
	}
	for name, s := range map[string]string{"started_at": rep.StartedAt, "ended_at": rep.EndedAt} {
		if !jsonTime.MatchString(s) {
			t.Errorf("%s = %q; want YYYY-MM-DDTHH:MM:SS.mmmZ", name, s)
		}
	}
	start, err1 := time.Parse(time.RFC3339Nano, rep.StartedAt)
	end, err2 := time.Parse(time.RFC3339Nano, rep.EndedAt)
	if err1 == nil && err2 == nil {
		if end.Before(start) {
			t.Errorf("ended_at %s before started_at %s", rep.EndedAt, rep.StartedAt)
		}
		if d := end.Sub(start).Seconds(); abs(d-rep.DurationS) > 0.0015 {
			t.Errorf("duration_s = %v; want ended_at - started_at = %v", rep.DurationS, d)
		}
	}

	checkStats(t, "totals", &rep.Totals)
	for name, s := range rep.Families {
		checkStats(t, "families."+name, &s)
		if name != "ipv4" && name != "ipv6" {
			t.Errorf("families has %q; want only ipv4 and ipv6", name)
		}
	}
	famSum := map[string]*jsonStats{}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		scope := "endpoint " + e.Address
		checkStats(t, scope, &e.jsonStats)
		a, err := netip.ParseAddr(e.Address)
		switch {
		case err != nil:
			t.Errorf("%s: address does not parse: %v", scope, err)
		case a.Is4() && e.Family != "ipv4", !a.Is4() && e.Family != "ipv6":
			t.Errorf("%s: family = %q; wrong for the address", scope, e.Family)
		}
		if famSum[e.Family] == nil {
			famSum[e.Family] = &jsonStats{Status: map[string]int64{}, Errors: map[string]int64{}}
		}
		addStats(famSum[e.Family], &e.jsonStats)
	}
	for fam, sum := range famSum {
		got, ok := rep.Families[fam]
		if !ok {
			t.Errorf("families has no %s, but endpoints of that family exist", fam)
			continue
		}
		compareSums(t, "families."+fam+" vs its endpoints", &got, sum)
	}
	if len(famSum) != len(rep.Families) {
		t.Errorf("families has %d entries; endpoints span %d families", len(rep.Families), len(famSum))
	}
	total := &jsonStats{Status: map[string]int64{}, Errors: map[string]int64{}}
	for _, s := range rep.Families {
		addStats(total, &s)
	}
	compareSums(t, "totals vs families", &rep.Totals, total)
}

func checkStats(t *testing.T, scope string, s *jsonStats) {
	t.Helper()
	if s.Requests != s.OK+s.Failed {
		t.Errorf("%s: requests %d != ok %d + failed %d", scope, s.Requests, s.OK, s.Failed)
	}
	var answered, errs int64
	for code, n := range s.Status {
		if c, err := strconv.Atoi(code); err != nil || c < 100 || c > 999 {
			t.Errorf("%s: status key %q is not a status code", scope, code)
		}
		answered += n
	}
	for _, n := range s.Errors {
		errs += n
	}
	if answered+errs != s.Requests {
		t.Errorf("%s: status counts %d + error counts %d != requests %d", scope, answered, errs, s.Requests)
	}
	if s.Requests > 0 {
		if want := float64(s.Failed) / float64(s.Requests); abs(s.FailureRate-want) > 1e-6 {
			t.Errorf("%s: failure_rate = %v; want failed/requests = %v", scope, s.FailureRate, want)
		}
		l := s.LatencyMS
		seq := []float64{l.Min, l.P50, l.P90, l.P99, l.P999, l.Max}
		if !slices.IsSorted(seq) || l.Min <= 0 {
			t.Errorf("%s: latency_ms min %v p50 %v p90 %v p99 %v p999 %v max %v; want 0 < min <= p50 <= p90 <= p99 <= p999 <= max",
				scope, l.Min, l.P50, l.P90, l.P99, l.P999, l.Max)
		}
		if l.Mean < l.Min || l.Mean > l.Max {
			t.Errorf("%s: latency_ms mean %v outside [min %v, max %v]", scope, l.Mean, l.Min, l.Max)
		}
	} else if s.FailureRate != 0 {
		t.Errorf("%s: failure_rate = %v with no request", scope, s.FailureRate)
	}
	h, err := report.DecodeHDR(s.HDR)
	if err != nil {
		t.Errorf("%s: hdr does not decode: %v", scope, err)
		return
	}
	if h.TotalCount() != s.Requests {
		t.Errorf("%s: hdr holds %d values; want requests = %d", scope, h.TotalCount(), s.Requests)
	}
}

func addStats(dst, src *jsonStats) {
	dst.Requests += src.Requests
	dst.OK += src.OK
	dst.Failed += src.Failed
	dst.Dropped += src.Dropped
	for k, v := range src.Status {
		dst.Status[k] += v
	}
	for k, v := range src.Errors {
		dst.Errors[k] += v
	}
}

func compareSums(t *testing.T, scope string, got, sum *jsonStats) {
	t.Helper()
	if got.Requests != sum.Requests || got.OK != sum.OK || got.Failed != sum.Failed || got.Dropped != sum.Dropped {
		t.Errorf("%s: requests/ok/failed/dropped = %d/%d/%d/%d; the parts add up to %d/%d/%d/%d", scope,
			got.Requests, got.OK, got.Failed, got.Dropped, sum.Requests, sum.OK, sum.Failed, sum.Dropped)
	}
	if !equalCounts(got.Status, sum.Status) {
		t.Errorf("%s: status = %v; the parts add up to %v", scope, got.Status, sum.Status)
	}
	if !equalCounts(got.Errors, sum.Errors) {
		t.Errorf("%s: errors = %v; the parts add up to %v", scope, got.Errors, sum.Errors)
	}
}

// equalCounts compares count maps, a missing key being 0.
func equalCounts(a, b map[string]int64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func endpointByAddr(t *testing.T, rep *jsonReport, addr string) *jsonEndpoint {
	t.Helper()
	for i := range rep.Endpoints {
		if rep.Endpoints[i].Address == addr {
			return &rep.Endpoints[i]
		}
	}
	t.Fatalf("report has no endpoint %s; endpoints: %v", addr, endpointAddrs(rep))
	return nil
}

// endpointAddrs lists the endpoints' addresses in order ([] when none).
func endpointAddrs(rep *jsonReport) []string {
	s := []string{}
	for _, e := range rep.Endpoints {
		s = append(s, e.Address)
	}
	return s
}

// ---------------------------------------------------------------------------
// Running pinprobe for a JSON report and checking the forensic invariants

// reportOpts says what a run asked for, so the invariants can be checked.
type reportOpts struct {
	samples int  // --samples (5 by default)
	noReqID bool // pinprobe added no X-Request-Id (--no-request-id or a -H one)
}

// runReport runs pinprobe with --format json -q and args, expects exit 0,
// decodes the report and checks the core and forensic invariants.
func runReport(t *testing.T, o reportOpts, args ...string) (*jsonReport, string) {
	t.Helper()
	args = append([]string{"--format", "json", "-q"}, args...)
	code, stdout, stderr := pinprobe(t, args...)
	if code != exitOK {
		t.Fatalf("pinprobe %s: exit %d; want 0; stderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	checkForensics(t, rep, stdout, o)
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr)
	}
	return rep, stdout
}

// reportTime parses a timestamp of the report, which must have the format of
// jsonTime.
func reportTime(t *testing.T, scope, s string) time.Time {
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
func sampleFailed(s jsonSample) bool { return s.Error != "" || s.Status >= 500 }

// checkForensics asserts what must hold in every report: the keys of the
// contract, timeline sums, fingerprint sums, connection splits, the sample
// quota, well-formed samples, client ports and a consistent verdict.
func checkForensics(t *testing.T, rep *jsonReport, raw string, o reportOpts) {
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

	start := reportTime(t, "started_at", rep.StartedAt)
	end := reportTime(t, "ended_at", rep.EndedAt)

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
		for name, p := range map[string]jsonPhase{"connect": e.Phases.Connect, "tls": e.Phases.TLS, "ttfb": e.Phases.TTFB} {
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
			at := reportTime(t, ss+" at", s.At)
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
func suspects(rep *jsonReport) []string {
	out := []string{}
	for _, s := range rep.Verdict.Suspects {
		out = append(out, s.Address)
	}
	return out
}

func checkVerdict(t *testing.T, rep *jsonReport, status string, want ...string) {
	t.Helper()
	t.Logf("verdict: %s", rep.Verdict.Summary)
	if want == nil {
		want = []string{}
	}
	if rep.Verdict.Status != status || !slices.Equal(suspects(rep), want) {
		t.Errorf("verdict %s, suspects %v; want %s, suspects %v\nsummary: %s", rep.Verdict.Status, suspects(rep), status, want, rep.Verdict.Summary)
	}
}

// ---------------------------------------------------------------------------
// A run whose DNS answer changes (--re-resolve)

// dnsChange is a run against dyn.test, served on the addresses of served
// and resolved through a test DNS server that first answers first. When the
// server on trigger has answered its 20th request (always 200), change
// alters the zone.
type dnsChange struct {
	served   []string          // addresses with a server
	policies map[string]policy // answers of the servers other than trigger; answerOK when absent
	first    []netip.Addr      // the DNS answer at the start
	trigger  string            // the server whose 20th request sets off change
	change   func(z *dnsZone)
	duration string // -d of the run
}

// runDNSChange runs pinprobe --re-resolve 1s --rate 200 for c.duration,
// checks the report (see runReport) and the servers against it, and
// returns the servers, the zone and the report.
func runDNSChange(t *testing.T, c dnsChange) (*fleet, *dnsZone, *jsonReport) {
	t.Helper()
	const host = "dyn.test"
	seen := make(chan struct{})
	policies := map[string]policy{
		c.trigger: func(n int64, r *http.Request) answer {
			if n == 20 {
				close(seen)
			}
			return answer{status: http.StatusOK}
		},
	}
	for a, p := range c.policies {
		if a != c.trigger {
			policies[a] = p
		}
	}
	f := startFleet(t, fleetOpts{host: host, policies: policies}, c.served...)
	zone, server := startDNS(t, map[string][]netip.Addr{host: c.first})
	go func() {
		select {
		case <-seen:
			c.change(zone)
		case <-t.Context().Done():
		}
	}()
	rep, _ := runReport(t, reportOpts{samples: 5}, "--dns-server", server, "--re-resolve", "1s", "-d", c.duration, "--rate", "200", f.url())
	f.check(t, rep)
	return f, zone, rep
}

// dnsChanges returns the DNS changes of the report's only host, failing the
// test unless there are n.
func dnsChanges(t *testing.T, rep *jsonReport, n int) []jsonChange {
	t.Helper()
	if len(rep.DNS) != 1 || len(rep.DNS[0].Changes) != n {
		t.Fatalf("dns %+v; want one host with %d change(s)", rep.DNS, n)
	}
	return rep.DNS[0].Changes
}

// checkOutOfDNS fails if b received new requests while its address was out
// of DNS, from removed until back (the end of the run when zero): only the
// requests already in flight (at most --concurrency 10) may arrive a moment
// later, within 500ms.
func (b *backend) checkOutOfDNS(t *testing.T, removed, back time.Time) {
	t.Helper()
	var late int
	for _, a := range b.arrivals() {
		if a.After(removed.Add(time.Millisecond)) && (back.IsZero() || a.Before(back.Add(-time.Millisecond))) {
			late++
			if a.After(removed.Add(500 * time.Millisecond)) {
				t.Errorf("%s received a request at %s, %s after it left DNS at %s", b.addr,
					a.UTC().Format(time.RFC3339Nano), a.Sub(removed), removed.UTC().Format(time.RFC3339Nano))
			}
		}
	}
	if late > 10 {
		t.Errorf("%s received %d requests while out of DNS; want at most the 10 in flight", b.addr, late)
	}
}
