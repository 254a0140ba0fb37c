package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/spf13/pflag"

	"pinprobe/report"
)

// runTimeout bounds every run() of these tests: a hung run is cancelled and
// then fails on its exit code instead of hanging the test binary.
const runTimeout = 30 * time.Second

// pinprobe runs the command through run() and returns its exit code, stdout
// and stderr. A panic fails the test with the arguments that caused it.
func pinprobe(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	return pinprobeCtx(t, ctx, args...)
}

func pinprobeCtx(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("pinprobe %s: panic: %v", strings.Join(args, " "), p)
			}
		}()
		code = run(ctx, args, &out, &errOut)
	}()
	return code, out.String(), errOut.String()
}

// ---------------------------------------------------------------------------
// Loopback backends

// fleet is a set of HTTP servers on one port of several loopback addresses.
// Every server counts the requests it handles and checks, server side, that
// each arrived on its own address with the Host header of the probed URL.
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
}

type backend struct {
	f      *fleet
	addr   netip.Addr
	status int
	delay  time.Duration

	hits     atomic.Int64
	inFlight atomic.Int64
	misplace atomic.Int64 // requests that arrived on another address or with another Host
	srv      *httptest.Server
}

// fleetOpts configure startFleet.
type fleetOpts struct {
	host     string               // Host header expected; "app.test" when empty
	status   func(netip.Addr) int // status per address; 200 when nil
	delay    time.Duration        // per request, before answering
	notifyAt int64                // see fleet.reached
	hold     bool                 // see fleet.hold
}

// startFleet starts one server per host, all on the same port.
func startFleet(t *testing.T, o fleetOpts, hosts ...string) *fleet {
	t.Helper()
	if o.host == "" {
		o.host = "app.test"
	}
	port, lns := listenPort(t, hosts...)
	f := &fleet{host: o.host, port: port, notifyAt: o.notifyAt, reached: make(chan struct{}),
		hold: o.hold, release: make(chan struct{})}
	for _, ln := range lns {
		ap := ln.Addr().(*net.TCPAddr).AddrPort()
		b := &backend{f: f, addr: ap.Addr().Unmap(), status: http.StatusOK, delay: o.delay}
		if o.status != nil {
			b.status = o.status(b.addr)
		}
		b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b.serve(w, r)
		}))
		b.srv.Listener.Close()
		b.srv.Listener = ln
		b.srv.Start()
		t.Cleanup(b.srv.Close)
		f.backends = append(f.backends, b)
	}
	t.Cleanup(f.releaseHeld) // runs before the servers' Close, which waits for held requests
	return f
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	f := b.f
	b.hits.Add(1)
	b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	local, _ := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if local == nil || local.AddrPort().Addr().Unmap() != b.addr || r.Host != net.JoinHostPort(f.host, strconv.Itoa(f.port)) {
		b.misplace.Add(1)
	}
	n := f.total.Add(1)
	if n == f.notifyAt {
		close(f.reached)
	}
	if f.hold && f.notifyAt > 0 && n >= f.notifyAt {
		select {
		case <-f.release:
		case <-r.Context().Done():
		}
	}
	if b.delay > 0 {
		tm := time.NewTimer(b.delay)
		select {
		case <-tm.C:
		case <-r.Context().Done():
			tm.Stop()
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(b.status)
	fmt.Fprintf(w, "%s answers %d\n", b.addr, b.status)
}

// releaseHeld lets the held requests (see fleetOpts.hold) be answered.
func (f *fleet) releaseHeld() { f.once.Do(func() { close(f.release) }) }

// hits returns the server-side request count of every address.
func (f *fleet) hits() map[string]int64 {
	m := map[string]int64{}
	for _, b := range f.backends {
		m[b.addr.String()] = b.hits.Load()
	}
	return m
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

// url is the probed URL of the fleet.
func (f *fleet) url() string { return fmt.Sprintf("http://%s:%d/", f.host, f.port) }

// resolve is the --resolve value that maps the fleet's host to its addresses.
func (f *fleet) resolve() string {
	var addrs []string
	for _, b := range f.backends {
		addrs = append(addrs, b.addr.String())
	}
	return fmt.Sprintf("%s:%d:%s", f.host, f.port, strings.Join(addrs, ","))
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

// ---------------------------------------------------------------------------
// A DNS server on loopback

// dnsServer answers A and AAAA queries from a table; every other name is
// NXDOMAIN. It returns "127.0.0.1:PORT" for --dns-server.
func dnsServer(t *testing.T, records map[string][]netip.Addr) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("dns: listen: %v", err)
	}
	zone := map[string][]netip.Addr{}
	for name, addrs := range records {
		zone[dns.Fqdn(strings.ToLower(name))] = addrs
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.Authoritative = true
		if len(q.Question) != 1 {
			m.Rcode = dns.RcodeFormatError
			w.WriteMsg(m)
			return
		}
		qq := q.Question[0]
		addrs, ok := zone[strings.ToLower(qq.Name)]
		if !ok {
			m.Rcode = dns.RcodeNameError
			w.WriteMsg(m)
			return
		}
		hdr := dns.RR_Header{Name: qq.Name, Class: dns.ClassINET, Ttl: 60}
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
	return pc.LocalAddr().String()
}

// ---------------------------------------------------------------------------
// The JSON report as a user's script sees it (deliberately not report.Report)

type jsonReport struct {
	Schema      string               `json:"schema"`
	Version     string               `json:"version"`
	Command     []string             `json:"command"`
	StartedAt   string               `json:"started_at"`
	EndedAt     string               `json:"ended_at"`
	DurationS   float64              `json:"duration_s"`
	Interrupted bool                 `json:"interrupted"`
	DNS         []jsonDNS            `json:"dns"`
	Totals      jsonStats            `json:"totals"`
	Families    map[string]jsonStats `json:"families"`
	Endpoints   []jsonEndpoint       `json:"endpoints"`
}

type jsonDNS struct {
	Host      string   `json:"host"`
	Port      int      `json:"port"`
	Source    string   `json:"source"`
	Addresses []string `json:"addresses"`
	Error     string   `json:"error"`
}

type jsonStats struct {
	Requests    int64            `json:"requests"`
	OK          int64            `json:"ok"`
	Failed      int64            `json:"failed"`
	FailureRate float64          `json:"failure_rate"`
	Dropped     int64            `json:"dropped"`
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
	Target  string `json:"target"`
	Host    string `json:"host"`
	Address string `json:"address"`
	Port    int    `json:"port"`
	Family  string `json:"family"`
}

// decodeReport decodes a JSON report and checks that every key of the
// contract this issue covers is present, at every level.
func decodeReport(t *testing.T, b []byte) *jsonReport {
	t.Helper()
	var rep jsonReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("decode report: %v\n%s", err, b)
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

func endpointAddrs(rep *jsonReport) []string {
	var s []string
	for _, e := range rep.Endpoints {
		s = append(s, e.Address)
	}
	return s
}

// compareHits fails unless the server-side count of every address equals
// the report's requests for its endpoint.
func compareHits(t *testing.T, f *fleet, rep *jsonReport) {
	t.Helper()
	got := map[string]int64{}
	for _, e := range rep.Endpoints {
		got[e.Address] = e.Requests
	}
	if want := f.hits(); !equalCounts(got, want) {
		t.Errorf("requests per address: report %v; servers counted %v", got, want)
	}
}

// ---------------------------------------------------------------------------
// 1. Bad input

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("this is not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	const u = "http://app.test/"
	tests := []struct {
		name string
		args []string
		want []string // substrings of the one stderr line: the flag and the value
	}{
		{"malformed URL", []string{"http://[::1"}, []string{"URL", `"http://[::1"`}},
		{"unsupported scheme", []string{"ftp://app.test/file"}, []string{`"ftp://app.test/file"`, `scheme "ftp"`}},
		{"URL without scheme", []string{"app.test/path"}, []string{`"app.test/path"`, "scheme"}},
		{"URL without host", []string{"http:///path"}, []string{`"http:///path"`, "host"}},
		{"URL port out of range", []string{"http://app.test:99999/"}, []string{`"http://app.test:99999/"`, "99999"}},
		{"rate zero", []string{"--rate", "0", u}, []string{"--rate", `"0"`}},
		{"rate negative", []string{"--rate", "-5", u}, []string{"--rate", `"-5"`}},
		{"rate not a number", []string{"--rate", "abc", u}, []string{"--rate", `"abc"`}},
		{"rate short flag", []string{"-r", "0", u}, []string{"--rate", `"0"`}},
		{"rate max unbounded", []string{"--rate", "max", "--duration", "0", u}, []string{"--rate max", "--duration"}},
		{"duration negative", []string{"--duration", "-1s", u}, []string{"--duration", "-1s"}},
		{"duration without unit", []string{"--duration", "5", u}, []string{"--duration", `"5"`}},
		{"requests negative", []string{"--requests", "-1", u}, []string{"--requests", "-1"}},
		{"concurrency zero", []string{"--concurrency", "0", u}, []string{"--concurrency", "0"}},
		{"timeout zero", []string{"--timeout", "0", u}, []string{"--timeout", "0"}},
		{"resolve no port", []string{"--resolve", "app.test", u}, []string{"--resolve", `"app.test"`}},
		{"resolve no address", []string{"--resolve", "app.test:80", u}, []string{"--resolve", `"app.test:80"`}},
		{"resolve empty address", []string{"--resolve", "app.test:80:", u}, []string{"--resolve", `"app.test:80:"`}},
		{"resolve not an IP", []string{"--resolve", "app.test:80:backend1", u}, []string{"--resolve", "backend1"}},
		{"resolve one bad IP in list", []string{"--resolve", "app.test:80:127.0.0.1,300.1.1.1", u}, []string{"--resolve", "300.1.1.1"}},
		{"resolve port zero", []string{"--resolve", "app.test:0:127.0.0.1", u}, []string{"--resolve", `"app.test:0:127.0.0.1"`}},
		{"resolve port too big", []string{"--resolve", "app.test:70000:127.0.0.1", u}, []string{"--resolve", "70000"}},
		{"resolve port not a number", []string{"--resolve", "app.test:http:127.0.0.1", u}, []string{"--resolve", `"app.test:http:127.0.0.1"`}},
		{"resolve no host", []string{"--resolve", ":80:127.0.0.1", u}, []string{"--resolve", `":80:127.0.0.1"`}},
		{"resolve unclosed bracket", []string{"--resolve", "[::1:80:127.0.0.1", u}, []string{"--resolve", `"[::1:80:127.0.0.1"`}},
		{"resolve zoned address", []string{"--resolve", "app.test:80:fe80::1%eth0", u}, []string{"--resolve", "fe80::1%eth0"}},
		{"cacert missing", []string{"--cacert", missing, u}, []string{"--cacert", missing, "no such file"}},
		{"cacert not PEM", []string{"--cacert", notPEM, u}, []string{"--cacert", notPEM, "PEM"}},
		{"cacert with insecure", []string{"--cacert", notPEM, "--insecure", u}, []string{"--cacert", "--insecure"}},
		{"format xml", []string{"--format", "xml", u}, []string{"--format", `"xml"`}},
		{"http 3", []string{"--http", "3", u}, []string{"--http", `"3"`}},
		{"-4 and -6", []string{"-4", "-6", u}, []string{"-4", "-6"}},
		{"fail-status 7xx", []string{"--fail-status", "7xx", u}, []string{"--fail-status", "7xx"}},
		{"fail-status abc", []string{"--fail-status", "abc", u}, []string{"--fail-status", "abc"}},
		{"fail-status bad item in list", []string{"--fail-status", "5xx,abc", u}, []string{"--fail-status", "abc"}},
		{"fail-status reversed range", []string{"--fail-status", "503-500", u}, []string{"--fail-status", "503-500"}},
		{"fail-status too small", []string{"--fail-status", "99", u}, []string{"--fail-status", "99"}},
		{"dns-server bogus", []string{"--dns-server", "bogus", u}, []string{"--dns-server", `"bogus"`}},
		{"dns-server port too big", []string{"--dns-server", "127.0.0.1:99999", u}, []string{"--dns-server", "127.0.0.1:99999"}},
		{"header without colon", []string{"--header", "NoColon", u}, []string{"--header", "NoColon"}},
		{"header short flag", []string{"-H", "X-Trace 1", u}, []string{"--header", "X-Trace 1"}},
		{"header empty name", []string{"-H", ": value", u}, []string{"--header", ": value"}},
		{"method with space", []string{"--method", "GET X", u}, []string{"--method", "GET X"}},
		{"body file missing", []string{"--body", "@" + missing, u}, []string{"--body", missing}},
		{"output in missing directory", []string{"-o", filepath.Join(missing, "r.json"), u}, []string{"--output", missing}},
		{"preflight both ways", []string{"--preflight", "--no-preflight", u}, []string{"--preflight", "--no-preflight"}},
		{"demo with a URL", []string{"--demo", u}, []string{"--demo", u}},
		{"no URL", nil, []string{"no URL"}},
		{"no URL, only flags", []string{"-q", "--rate", "5"}, []string{"no URL"}},
		{"unknown flag", []string{"--bogus", u}, []string{"--bogus"}},
		{"unknown short flag", []string{"-Z", u}, []string{"Z"}},
		{"flag without value", []string{u, "--rate"}, []string{"--rate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := pinprobe(t, tt.args...)
			if code != exitUsage {
				t.Errorf("pinprobe %q: exit %d; want %d (stderr %q)", tt.args, code, exitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("pinprobe %q: stdout %q; want nothing", tt.args, stdout)
			}
			if !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("pinprobe %q: stderr %q; want exactly one line", tt.args, stderr)
			}
			if !strings.HasPrefix(stderr, "pinprobe: ") {
				t.Errorf("pinprobe %q: stderr %q; want it to start with \"pinprobe: \"", tt.args, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("pinprobe %q: stderr %q; want it to name %q", tt.args, stderr, w)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(missing, "r.json")); err == nil {
		t.Errorf("a rejected -o left its file behind")
	}
}

// ---------------------------------------------------------------------------
// 2. Hosts that do not resolve

func TestNothingResolves(t *testing.T) {
	server := dnsServer(t, nil)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"NXDOMAIN from --dns-server", []string{"--dns-server", server, "http://nx.test:8080/"},
			[]string{"nx.test", "no such host", server}},
		{"--resolve for another port falls back to DNS",
			[]string{"--resolve", "nx.test:81:127.0.0.1", "--dns-server", server, "http://nx.test:80/"},
			[]string{"nx.test", "no such host"}},
		{"every target NXDOMAIN", []string{"--dns-server", server, "http://nx.test/", "https://other.invalid/"},
			[]string{"nx.test", "other.invalid"}},
		{"-6 with only IPv4 addresses", []string{"-6", "--resolve", "app.test:80:127.0.0.1", "http://app.test/"},
			[]string{"app.test", "ipv6", "127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-q", "--requests", "1"}, tt.args...)
			code, stdout, stderr := pinprobe(t, args...)
			if code != exitNoAddress {
				t.Errorf("exit %d; want %d; stderr:\n%s", code, exitNoAddress, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q; want nothing", stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, stderr)
				}
			}
			if !strings.Contains(stderr, "nothing to probe") {
				t.Errorf("stderr does not say there is nothing to probe:\n%s", stderr)
			}
		})
	}
}

func TestSomeTargetsUnresolvable(t *testing.T) {
	f := startFleet(t, fleetOpts{host: "good.test"}, "127.0.0.1", "::1")
	server := dnsServer(t, map[string][]netip.Addr{
		"good.test": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
	})
	bad := fmt.Sprintf("http://nx.test:%d/", f.port)
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "200", "--requests", "20",
		"--dns-server", server, f.url(), bad)
	if code != exitOK {
		t.Fatalf("exit %d; want %d; stderr:\n%s", code, exitOK, stderr)
	}
	if !strings.Contains(stderr, "nx.test") || !strings.Contains(stderr, "no such host") {
		t.Errorf("stderr does not say nx.test did not resolve:\n%s", stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if got := endpointAddrs(rep); !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Errorf("endpoints %v; want 127.0.0.1 and ::1 of good.test only", got)
	}
	for _, e := range rep.Endpoints {
		if e.Host != "good.test" {
			t.Errorf("endpoint %s has host %q; want good.test", e.Address, e.Host)
		}
	}
	if rep.Totals.Requests != 20 || rep.Totals.Failed != 0 {
		t.Errorf("totals: %d requests, %d failed; want 20, 0", rep.Totals.Requests, rep.Totals.Failed)
	}
	compareHits(t, f, rep)
	f.checkPlacement(t)

	if len(rep.DNS) != 2 {
		t.Fatalf("dns has %d entries; want 2: %+v", len(rep.DNS), rep.DNS)
	}
	good, nx := rep.DNS[0], rep.DNS[1]
	if good.Host != "good.test" || good.Source != "dns "+server || !slices.Equal(good.Addresses, []string{"127.0.0.1", "::1"}) || good.Error != "" {
		t.Errorf("dns[0] = %+v; want good.test from %q with 127.0.0.1, ::1", good, "dns "+server)
	}
	if nx.Host != "nx.test" || len(nx.Addresses) != 0 || !strings.Contains(nx.Error, "no such host") {
		t.Errorf("dns[1] = %+v; want nx.test with no addresses and a no such host error", nx)
	}
}

// ---------------------------------------------------------------------------
// 3. The JSON contract against three real servers

func TestJSONReportThreeAddresses(t *testing.T) {
	f := startFleet(t, fleetOpts{status: func(a netip.Addr) int {
		if a.Is6() {
			return http.StatusBadGateway
		}
		return http.StatusOK
	}}, "127.0.0.1", "127.0.0.2", "::1")
	resolve := fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2,::1", f.port)
	args := []string{"--resolve", resolve, "--format", "json", "-q", "--rate", "300", "--requests", "90",
		"-H", "Authorization: Bearer x", "-H", "X-Api-Key: y", "--header=Cookie: session=abc",
		"-H", "X-Trace: visible", f.url()}
	code, stdout, stderr := pinprobe(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)

	wantCmd := []string{"pinprobe", "--resolve", resolve, "--format", "json", "-q", "--rate", "300", "--requests", "90",
		"-H", "Authorization: REDACTED", "-H", "X-Api-Key: REDACTED", "--header=Cookie: REDACTED",
		"-H", "X-Trace: visible", f.url()}
	if !slices.Equal(rep.Command, wantCmd) {
		t.Errorf("command = %q;\nwant      %q", rep.Command, wantCmd)
	}
	for _, secret := range []string{"Bearer x", "session=abc", ": y"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("the report contains the secret %q", secret)
		}
	}
	if rep.Interrupted {
		t.Errorf("interrupted = true; want false")
	}

	wantDNS := []jsonDNS{{Host: "app.test", Port: f.port, Source: "resolve", Addresses: []string{"127.0.0.1", "127.0.0.2", "::1"}}}
	if len(rep.DNS) != 1 || rep.DNS[0].Host != wantDNS[0].Host || rep.DNS[0].Port != wantDNS[0].Port ||
		rep.DNS[0].Source != wantDNS[0].Source || !slices.Equal(rep.DNS[0].Addresses, wantDNS[0].Addresses) || rep.DNS[0].Error != "" {
		t.Errorf("dns = %+v; want %+v", rep.DNS, wantDNS)
	}

	if rep.Totals.Requests != 90 {
		t.Errorf("totals.requests = %d; want 90 (--requests 90)", rep.Totals.Requests)
	}
	if len(rep.Totals.Errors) != 0 {
		t.Errorf("transport errors %v; want none", rep.Totals.Errors)
	}
	wantEps := []struct{ addr, family string }{{"127.0.0.1", "ipv4"}, {"127.0.0.2", "ipv4"}, {"::1", "ipv6"}}
	if len(rep.Endpoints) != len(wantEps) {
		t.Fatalf("endpoints %v; want %v", endpointAddrs(rep), wantEps)
	}
	for i, w := range wantEps {
		e := rep.Endpoints[i]
		if e.Address != w.addr || e.Family != w.family || e.Port != f.port || e.Host != "app.test" || e.Target != f.url() {
			t.Errorf("endpoint %d = %s/%s port %d host %q target %q; want %s/%s port %d host app.test target %s",
				i, e.Address, e.Family, e.Port, e.Host, e.Target, w.addr, w.family, f.port, f.url())
		}
		if e.Requests == 0 {
			t.Errorf("endpoint %s: no request", e.Address)
		}
		wantStatus := "200"
		if w.family == "ipv6" {
			wantStatus = "502"
		}
		if !equalCounts(e.Status, map[string]int64{wantStatus: e.Requests}) {
			t.Errorf("endpoint %s: status %v; want all %d %s", e.Address, e.Status, e.Requests, wantStatus)
		}
	}
	v4, v6 := rep.Families["ipv4"], rep.Families["ipv6"]
	if v6.FailureRate != 1.0 || v6.Failed != v6.Requests || v6.Requests == 0 {
		t.Errorf("families.ipv6: %d of %d failed, failure_rate %v; want all, 1.0", v6.Failed, v6.Requests, v6.FailureRate)
	}
	if v4.FailureRate != 0 || v4.Failed != 0 || v4.Requests == 0 {
		t.Errorf("families.ipv4: %d of %d failed, failure_rate %v; want none, 0.0", v4.Failed, v4.Requests, v4.FailureRate)
	}
	if want := float64(v6.Requests) / 90; abs(rep.Totals.FailureRate-want) > 1e-6 {
		t.Errorf("totals.failure_rate = %v; want %v", rep.Totals.FailureRate, want)
	}
	compareHits(t, f, rep)
	f.checkPlacement(t)
}

// ---------------------------------------------------------------------------
// 4. -o FILE

func TestOutputFile(t *testing.T) {
	f := startFleet(t, fleetOpts{}, "127.0.0.1")
	dir := t.TempDir()
	common := []string{"-q", "--rate", "200", "--requests", "20", "--resolve", f.resolve(), f.url()}

	jsonFile := filepath.Join(dir, "report.json")
	code, stdout, stderr := pinprobe(t, append([]string{"--format", "json", "-o", jsonFile}, common...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	saved, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatalf("-o wrote nothing: %v", err)
	}
	if string(saved) != stdout {
		t.Errorf("-o FILE differs from --format json on stdout:\nfile:\n%s\nstdout:\n%s", saved, stdout)
	}
	rep := decodeReport(t, saved)
	checkReport(t, rep)
	compareHits(t, f, rep)

	f = startFleet(t, fleetOpts{}, "127.0.0.1")
	common = []string{"-q", "--rate", "200", "--requests", "20", "--resolve", f.resolve(), f.url()}
	textFile := filepath.Join(dir, "sub-report.json")
	code, stdout, stderr = pinprobe(t, append([]string{"-o", textFile}, common...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "pinprobe "+version) || !strings.Contains(stdout, "BY ENDPOINT") || !strings.Contains(stdout, "· 20 requests ·") {
		t.Errorf("stdout is not the text report of 20 requests:\n%s", stdout)
	}
	if strings.Contains(stdout, `"schema"`) {
		t.Errorf("the JSON report leaked to stdout with --format text:\n%s", stdout)
	}
	saved, err = os.ReadFile(textFile)
	if err != nil {
		t.Fatalf("-o with --format text wrote nothing: %v", err)
	}
	rep = decodeReport(t, saved)
	checkReport(t, rep)
	if rep.Totals.Requests != 20 {
		t.Errorf("-o file: totals.requests = %d; want 20", rep.Totals.Requests)
	}
	compareHits(t, f, rep)
}

// ---------------------------------------------------------------------------
// 5. Interrupt through run's context

func TestInterruptThroughContext(t *testing.T) {
	const n = 15
	// Requests take 50 ms, and from the n-th on they are held until the
	// interrupt has been given, so some are certainly in flight then.
	f := startFleet(t, fleetOpts{delay: 50 * time.Millisecond, notifyAt: n, hold: true}, "127.0.0.1", "::1")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type outcome struct {
		code           int
		stdout, stderr string
	}
	done := make(chan outcome, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := run(ctx, []string{"-q", "--format", "json", "--duration", "30s", "--rate", "100",
			"--no-preflight", "--resolve", f.resolve(), f.url()}, &out, &errOut)
		done <- outcome{code, out.String(), errOut.String()}
	}()

	var cancelled time.Time
	var inFlight int64
	select {
	case <-f.reached:
		for _, b := range f.backends {
			inFlight += b.inFlight.Load()
		}
		cancelled = time.Now()
		cancel()
		f.releaseHeld()
	case o := <-done:
		t.Fatalf("run returned %d before the servers saw %d requests; stderr:\n%s", o.code, n, o.stderr)
	case <-time.After(15 * time.Second):
		t.Fatalf("the servers saw only %d requests in 15s; want %d", f.total.Load(), n)
	}
	var o outcome
	select {
	case o = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("run did not return within 10s of the interrupt")
	}
	if took := time.Since(cancelled); took > 5*time.Second {
		t.Errorf("run returned %v after the interrupt; want < 5s", took)
	}
	if o.code != exitInterrupted {
		t.Fatalf("exit %d; want %d; stderr:\n%s", o.code, exitInterrupted, o.stderr)
	}
	rep := decodeReport(t, []byte(o.stdout))
	checkReport(t, rep)
	if !rep.Interrupted {
		t.Errorf("interrupted = false; want true")
	}
	if rep.DurationS > 20 {
		t.Errorf("duration_s = %v; want the time until the interrupt, not the planned 30s", rep.DurationS)
	}
	t.Logf("servers saw %d requests, %d in flight at the interrupt", f.total.Load(), inFlight)
	if inFlight == 0 {
		t.Errorf("no request was in flight at the interrupt; the test proves less than it should")
	}
	if rep.Totals.Requests != f.total.Load() || rep.Totals.Requests < n {
		t.Errorf("totals.requests = %d; servers counted %d (at least %d)", rep.Totals.Requests, f.total.Load(), n)
	}
	if rep.Totals.Failed != 0 {
		t.Errorf("totals.failed = %d; want 0: requests in flight at the interrupt must finish, errors %v",
			rep.Totals.Failed, rep.Totals.Errors)
	}
	compareHits(t, f, rep)
	f.checkPlacement(t)
}

// ---------------------------------------------------------------------------
// 6. SIGINT to the real binary

// subprocess is a running pinprobe binary whose stderr is watched line by line.
type subprocess struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	mu     sync.Mutex
	stderr bytes.Buffer
	lines  chan string // stderr, line by line; closed at EOF
	exited chan error
}

func startBinary(t *testing.T, ctx context.Context, bin string, args ...string) *subprocess {
	t.Helper()
	p := &subprocess{cmd: exec.CommandContext(ctx, bin, args...), lines: make(chan string, 100), exited: make(chan error, 1)}
	p.cmd.Stdout = &p.stdout
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(p.lines)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for this line
			}
		}
	}()
	go func() {
		<-readDone // Wait closes the pipe: read it all first
		p.exited <- p.cmd.Wait()
	}()
	return p
}

func (p *subprocess) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitLine waits for a stderr line containing s.
func (p *subprocess) waitLine(t *testing.T, ctx context.Context, s string) {
	t.Helper()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("pinprobe closed stderr without printing %q; stderr:\n%s", s, p.stderrText())
			}
			if strings.Contains(line, s) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no %q on stderr before the deadline; stderr:\n%s", s, p.stderrText())
		}
	}
}

// wait returns the exit code of the process, failing the test unless it
// exits within limit.
func (p *subprocess) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-p.exited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("pinprobe: %v", err)
		}
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		p.cmd.Process.Kill()
		t.Fatalf("pinprobe did not exit within %v; stderr:\n%s", limit, p.stderrText())
		return -1
	}
}

func TestSIGINTSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT on windows")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "pinprobe")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("one SIGINT: full report, exit 130", func(t *testing.T) {
		const n = 10
		f := startFleet(t, fleetOpts{delay: 20 * time.Millisecond, notifyAt: n}, "127.0.0.1")
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		p := startBinary(t, ctx, bin, "--rate", "100", "--duration", "30s", "-q", "--resolve", f.resolve(), f.url())
		select {
		case <-f.reached:
		case err := <-p.exited:
			t.Fatalf("pinprobe exited (%v) before the server saw %d requests; stderr:\n%s", err, n, p.stderrText())
		case <-ctx.Done():
			t.Fatalf("the server saw only %d requests before the deadline", f.total.Load())
		}
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 5*time.Second); code != exitInterrupted {
			t.Fatalf("exit %d after SIGINT; want %d; stderr:\n%s", code, exitInterrupted, p.stderrText())
		}
		out := p.stdout.String()
		for _, w := range []string{"INTERRUPTED", "BY FAMILY", "BY ENDPOINT", "127.0.0.1"} {
			if !strings.Contains(out, w) {
				t.Errorf("stdout has no %q:\n%s", w, out)
			}
		}
		m := regexp.MustCompile(`· (\d+) requests ·`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no request count in the report header:\n%s", out)
		}
		if got, want := m[1], strconv.FormatInt(f.total.Load(), 10); got != want {
			t.Errorf("report counts %s requests; the server counted %s", got, want)
		}
		if !strings.Contains(p.stderrText(), "interrupted") {
			t.Errorf("stderr does not acknowledge the interrupt:\n%s", p.stderrText())
		}
	})

	t.Run("second SIGINT: exit at once", func(t *testing.T) {
		const n = 5
		// From the n-th on, requests are held until the test ends: the
		// first SIGINT must wait for them, the second must not.
		f := startFleet(t, fleetOpts{notifyAt: n, hold: true}, "127.0.0.1")
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		p := startBinary(t, ctx, bin, "--rate", "100", "--duration", "30s", "--timeout", "20s", "-q",
			"--resolve", f.resolve(), f.url())
		select {
		case <-f.reached:
		case err := <-p.exited:
			t.Fatalf("pinprobe exited (%v) before the server saw %d requests; stderr:\n%s", err, n, p.stderrText())
		case <-ctx.Done():
			t.Fatalf("the server saw only %d requests before the deadline", f.total.Load())
		}
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		p.waitLine(t, ctx, "waiting for requests in flight")
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 5*time.Second); code != exitInterrupted {
			t.Errorf("exit %d after the second SIGINT; want %d; stderr:\n%s", code, exitInterrupted, p.stderrText())
		}
		if p.stdout.Len() != 0 {
			t.Errorf("stdout %q; want no report after the second SIGINT", p.stdout.String())
		}
	})
}

// ---------------------------------------------------------------------------
// 7. The demo

func TestDemo(t *testing.T) {
	code, stdout, stderr := pinprobe(t, "--demo", "-q", "--duration", "1s", "--rate", "60", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d; want 0; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if len(rep.Endpoints) < 2 {
		t.Fatalf("demo has endpoints %v; want at least two", endpointAddrs(rep))
	}
	failing := rep.Endpoints[len(rep.Endpoints)-1].Address // ::1, or the last IPv4 address without IPv6
	if slices.Contains(endpointAddrs(rep), "::1") {
		failing = "::1"
	}
	for _, e := range rep.Endpoints {
		if e.Host != demoHost {
			t.Errorf("endpoint %s: host %q; want %s", e.Address, e.Host, demoHost)
		}
		if e.Requests == 0 {
			t.Errorf("endpoint %s: no request", e.Address)
			continue
		}
		if e.Address == failing {
			if !equalCounts(e.Status, map[string]int64{"502": e.Requests}) || e.FailureRate != 1 {
				t.Errorf("failing endpoint %s: status %v, errors %v, failure_rate %v; want 100%% 502",
					e.Address, e.Status, e.Errors, e.FailureRate)
			}
		} else if e.Failed != 0 || !equalCounts(e.Status, map[string]int64{"200": e.Requests}) {
			t.Errorf("healthy endpoint %s: %d failed, status %v, errors %v; want all 200", e.Address, e.Failed, e.Status, e.Errors)
		}
	}
	if failing == "::1" {
		if v4 := rep.Families["ipv4"]; v4.Failed != 0 || v4.Requests == 0 {
			t.Errorf("families.ipv4: %d of %d failed; want none", v4.Failed, v4.Requests)
		}
		if v6 := rep.Families["ipv6"]; v6.FailureRate != 1 {
			t.Errorf("families.ipv6.failure_rate = %v; want 1", v6.FailureRate)
		}
	}
	if len(rep.DNS) != 1 || rep.DNS[0].Source != "demo" || rep.DNS[0].Host != demoHost {
		t.Errorf("dns = %+v; want one entry for %s from demo", rep.DNS, demoHost)
	}
}

// ---------------------------------------------------------------------------
// 8. --preflight

func TestPreflight(t *testing.T) {
	t.Run("one address closed", func(t *testing.T) {
		f := startFleet(t, fleetOpts{}, "127.0.0.1")
		closed := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), uint16(f.port))
		if c, err := net.DialTimeout("tcp", closed.String(), time.Second); err == nil {
			c.Close()
			t.Skipf("something listens on %s", closed)
		} else if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Skipf("127.0.0.2 is not usable here: %v", err)
		}
		code, stdout, stderr := pinprobe(t, "--preflight", "--resolve",
			fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2", f.port), f.url())
		if code != exitFail {
			t.Errorf("exit %d; want %d; stderr:\n%s", code, exitFail, stderr)
		}
		lines := strings.Split(stdout, "\n")
		var open, shut string
		for _, l := range lines {
			switch {
			case strings.Contains(l, "127.0.0.1"):
				open = l
			case strings.Contains(l, "127.0.0.2"):
				shut = l
			}
		}
		if open == "" || !strings.Contains(open, " ok ") || strings.Contains(open, "✗") {
			t.Errorf("stdout does not list 127.0.0.1 as ok:\n%s", stdout)
		}
		if shut == "" || !strings.Contains(shut, "connect_refused") || !strings.Contains(shut, "✗") {
			t.Errorf("stdout does not list 127.0.0.2 as connect_refused:\n%s", stdout)
		}
		if !strings.Contains(stdout, "1 of 2 endpoints") {
			t.Errorf("stdout does not say 1 of 2 endpoints connect:\n%s", stdout)
		}
		if n := f.total.Load(); n != 0 {
			t.Errorf("--preflight sent %d HTTP requests; want none", n)
		}
	})
	t.Run("all open", func(t *testing.T) {
		f := startFleet(t, fleetOpts{}, "127.0.0.1", "127.0.0.2", "::1")
		code, stdout, stderr := pinprobe(t, "--preflight", "--resolve", f.resolve(), f.url())
		if code != exitOK {
			t.Errorf("exit %d; want 0; stderr:\n%s", code, stderr)
		}
		for _, a := range []string{"127.0.0.1", "127.0.0.2", "::1"} {
			if !strings.Contains(stdout, "  "+a+"  ") {
				t.Errorf("stdout does not list %s:\n%s", a, stdout)
			}
		}
		if strings.Contains(stdout, "✗") || !strings.Contains(stdout, "3 of 3 endpoints") {
			t.Errorf("stdout does not show 3 of 3 endpoints connecting:\n%s", stdout)
		}
		if n := f.total.Load(); n != 0 {
			t.Errorf("--preflight sent %d HTTP requests; want none", n)
		}
	})
}

// ---------------------------------------------------------------------------
// 9. --help and --version

func TestHelp(t *testing.T) {
	// The long flags DESIGN.md makes the contract, as far as this release has them.
	contract := []string{"rate", "duration", "requests", "concurrency", "resolve", "dns-server", "new-conn",
		"method", "header", "body", "timeout", "cacert", "insecure", "http", "fail-status", "output", "format",
		"quiet", "preflight", "no-preflight", "demo", "help", "version"}
	shorts := []string{"-r", "-d", "-n", "-c", "-4", "-6", "-X", "-H", "-o", "-q", "-h"}
	var defined []string
	newFlagSet(&config{}).VisitAll(func(f *pflag.Flag) { defined = append(defined, f.Name) })
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--rate", "5", "--help", "http://app.test/"}} {
		code, stdout, stderr := pinprobe(t, args...)
		if code != exitOK {
			t.Errorf("pinprobe %q: exit %d; want 0", args, code)
		}
		if stderr != "" {
			t.Errorf("pinprobe %q: stderr %q; want nothing", args, stderr)
		}
		for _, name := range slices.Concat(contract, defined) {
			if !strings.Contains(stdout, "--"+name) {
				t.Errorf("pinprobe %q: help does not show --%s", args, name)
			}
		}
		for _, s := range shorts {
			if !strings.Contains(stdout, s+", --") {
				t.Errorf("pinprobe %q: help does not show %s", args, s)
			}
		}
		for _, w := range []string{"Usage:", "Exit codes", "130"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("pinprobe %q: help has no %q", args, w)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	code, stdout, stderr := pinprobe(t, "--version")
	if code != exitOK || stdout != "pinprobe "+version+"\n" || stderr != "" {
		t.Errorf("--version: exit %d, stdout %q, stderr %q; want 0, %q, nothing", code, stdout, stderr, "pinprobe "+version+"\n")
	}
}

// TestRedactArgs: every form pflag accepts for -H/--header is redacted in
// the report's command when the header is secret, and left alone otherwise.
func TestRedactArgs(t *testing.T) {
	const u = "http://app.test/"
	tests := []struct {
		args, want []string
	}{
		{[]string{"-H", "Authorization: Bearer s3cret", u}, []string{"-H", "Authorization: REDACTED", u}},
		{[]string{"--header", "Cookie: s3cret", u}, []string{"--header", "Cookie: REDACTED", u}},
		{[]string{"--header=Set-Cookie: s3cret", u}, []string{"--header=Set-Cookie: REDACTED", u}},
		{[]string{"-HProxy-Authorization: s3cret", u}, []string{"-HProxy-Authorization: REDACTED", u}},
		{[]string{"-H=X-Auth-Token: s3cret", u}, []string{"-H=X-Auth-Token: REDACTED", u}},
		{[]string{"-qH", "X-Api-Key: s3cret", u}, []string{"-qH", "X-Api-Key: REDACTED", u}},
		{[]string{"-q4HX-Client-Secret:s3cret", u}, []string{"-q4HX-Client-Secret: REDACTED", u}},
		{[]string{"-H", "authorization:s3cret", u}, []string{"-H", "authorization: REDACTED", u}},
		{[]string{"-H", "X-Trace: visible", "-XPOST", u}, []string{"-H", "X-Trace: visible", "-XPOST", u}},
		{[]string{"-X", "HEAD", "-H", "Accept: */*", u}, []string{"-X", "HEAD", "-H", "Accept: */*", u}},
		{[]string{"-XH", "-H", "Cookie: s3cret", u}, []string{"-XH", "-H", "Cookie: REDACTED", u}}, // -X's value is "H"
		{[]string{"http://user:s3cret@app.test/"}, []string{"http://user:REDACTED@app.test/"}},
	}
	for _, tt := range tests {
		c, _, err := parseArgs(tt.args)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.args, err)
			continue
		}
		if len(c.headers.lines) == 0 && strings.Contains(strings.Join(tt.args, " "), ":") && !strings.Contains(tt.args[0], "://") {
			t.Errorf("parseArgs(%q) found no header: the case does not test a real -H form", tt.args)
		}
		got := redactArgs(tt.args)
		if !slices.Equal(got, tt.want) {
			t.Errorf("redactArgs(%q) = %q; want %q", tt.args, got, tt.want)
		}
		if strings.Contains(strings.Join(got, " "), "s3cret") {
			t.Errorf("redactArgs(%q) = %q: the secret is still there", tt.args, got)
		}
	}
}

// TestInterruptWhileResolving: Ctrl-C while DNS has not answered yet is an
// interrupt (130), not "nothing could be probed" (3).
func TestInterruptWhileResolving(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	asked := make(chan struct{})
	go func() { // a DNS server that reads the queries and never answers
		buf := make([]byte, 1500)
		var once sync.Once
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			once.Do(func() { close(asked) })
		}
	}()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	var stdout, stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"-q", "--dns-server", pc.LocalAddr().String(), "http://slow.test/"}, &stdout, &stderr)
	}()
	select {
	case <-asked:
	case code := <-done:
		t.Fatalf("run returned %d before asking the DNS server; stderr:\n%s", code, &stderr)
	case <-time.After(10 * time.Second):
		t.Fatal("no DNS query within 10s")
	}
	cancel()
	select {
	case code := <-done:
		if code != exitInterrupted {
			t.Errorf("exit %d; want %d; stderr:\n%s", code, exitInterrupted, &stderr)
		}
		if stdout.Len() != 0 {
			t.Errorf("stdout %q; want nothing: no request was sent", &stdout)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return within 5s of the interrupt")
	}
}

// TestIPLiteralURLs: an IP-literal URL is one endpoint, resolved by nobody.
func TestIPLiteralURLs(t *testing.T) {
	f := startFleet(t, fleetOpts{}, "127.0.0.1", "::1")
	u4 := fmt.Sprintf("http://127.0.0.1:%d/", f.port)
	u6 := fmt.Sprintf("http://[::1]:%d/", f.port)
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "200", "--requests", "20", u4, u6)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if got := endpointAddrs(rep); !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Fatalf("endpoints %v; want one per literal: 127.0.0.1, ::1", got)
	}
	for i, want := range []string{u4, u6} {
		if e := rep.Endpoints[i]; e.Target != want || e.Host != strings.Trim(e.Address, "[]") {
			t.Errorf("endpoint %d: target %q host %q; want %q and its address", i, e.Target, e.Host, want)
		}
	}
	for _, d := range rep.DNS {
		if d.Source != "literal" || len(d.Addresses) != 1 || d.Addresses[0] != d.Host {
			t.Errorf("dns %+v; want source literal with the host itself", d)
		}
	}
	compareHits(t, f, rep)
}
