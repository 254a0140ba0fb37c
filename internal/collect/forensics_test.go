package collect_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// The automatic timeline doubles its interval to stay under maxPoints
// buckets, merging buckets exactly, whatever order the results arrive in.
func TestTimelineCoarsensExactly(t *testing.T) {
	type res struct {
		ep      int
		at      time.Duration
		failed  bool
		latency time.Duration
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var rs []res
	for i := range 5000 {
		rs = append(rs, res{ep: i % 2, at: time.Duration(rng.Int64N(int64(1000 * time.Second))), failed: rng.IntN(7) == 0,
			latency: time.Duration(rng.Int64N(int64(2 * time.Second)))})
	}
	rs = append(rs, res{ep: 0, at: 999*time.Second + 999*time.Millisecond}, res{ep: 1, at: 0, failed: true})
	rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })

	for _, tc := range []struct {
		name     string
		auto     bool
		interval time.Duration
		want     time.Duration
	}{
		{"auto from 1s", true, time.Second, 4 * time.Second},                       // 1000 -> 500 -> 250 buckets
		{"auto from 100ms", true, 100 * time.Millisecond, 6400 * time.Millisecond}, // 3.2s would need 313
		{"fixed 1s", false, time.Second, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agg, _ := fixture.FzAggregator(t, "192.0.2.1", "2001:db8::1")
			agg.SetTimeline(fixture.FzStart, tc.interval, tc.auto)
			want := [2][][2]int64{}
			wantLat := [2][]map[uint16]int64{} // endpoint -> bucket -> bin -> requests
			for _, r := range rs {
				st := 200
				if r.failed {
					st = 502
				}
				agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: r.ep, Start: fixture.FzStart.Add(r.at), Latency: r.latency, Status: st}))
				i := int(r.at / tc.want)
				for len(want[r.ep]) <= i {
					want[r.ep] = append(want[r.ep], [2]int64{})
					wantLat[r.ep] = append(wantLat[r.ep], map[uint16]int64{})
				}
				wantLat[r.ep][i][uint16(report.LatencyBin(report.Micros(r.latency)))]++
				want[r.ep][i][0]++
				if r.failed {
					want[r.ep][i][1]++
				}
			}
			rep := fixture.FzClose(agg, 1000*time.Second)
			tl := rep.Timeline
			if tl.IntervalS != tc.want.Seconds() {
				t.Fatalf("interval_s = %v; want %v", tl.IntervalS, tc.want.Seconds())
			}
			if !tl.Start.Equal(fixture.FzStart) {
				t.Errorf("start = %v; want %v", tl.Start, fixture.FzStart)
			}
			if tc.auto && len(tl.Series[0].Requests) > report.MaxPoints {
				t.Errorf("%d buckets; want at most %d", len(tl.Series[0].Requests), report.MaxPoints)
			}
			for e, s := range tl.Series {
				n := max(len(want[0]), len(want[1]))
				if len(s.Requests) != n || len(s.Failed) != n {
					t.Fatalf("series %d: %d/%d buckets; want %d", e, len(s.Requests), len(s.Failed), n)
				}
				for i := range n {
					var w [2]int64
					if i < len(want[e]) {
						w = want[e][i]
					}
					if s.Requests[i] != w[0] || s.Failed[i] != w[1] {
						t.Errorf("series %d bucket %d: %d requests, %d failed; want %d, %d", e, i, s.Requests[i], s.Failed[i], w[0], w[1])
					}
				}
				// The latencies, coarsened with the counts: each bucket's
				// bins are those of its requests, the endpoint's and its
				// family's (one endpoint each here).
				fam := tl.Families[slices.IndexFunc(tl.Families, func(f report.FamilySeries) bool { return f.Family == rep.Endpoints[e].Family })]
				for _, l := range []*report.Latencies{s.Latency, &fam.Latency} {
					if l == nil || l.Buckets() != n {
						t.Fatalf("series %d: latencies %+v; want %d buckets", e, l, n)
					}
					for i := range n {
						got := map[uint16]int64{}
						for j, b := range l.Bins[i] {
							got[b] = l.Counts[i][j]
						}
						w := map[uint16]int64{}
						if i < len(wantLat[e]) {
							w = wantLat[e][i]
						}
						if !maps.Equal(got, w) || !slices.IsSorted(l.Bins[i]) {
							t.Fatalf("series %d bucket %d: latency bins %v %v; want %v", e, i, l.Bins[i], l.Counts[i], w)
						}
					}
				}
				if e < len(rep.Endpoints) && fixture.Sum(s.Requests) != rep.Endpoints[e].Requests {
					t.Errorf("series %d sums to %d; the endpoint has %d requests", e, fixture.Sum(s.Requests), rep.Endpoints[e].Requests)
				}
			}
		})
	}
}

// The timeline keeps latencies over time of every family but of the first
// MaxLatencyEndpoints endpoints only, and of the first MaxGroupSeries
// instances: an aggregator's memory does not grow with them, and its
// report holds what it says (every family's series counts all its
// requests).
func TestTimelineLatenciesBounded(t *testing.T) {
	const n = report.MaxLatencyEndpoints + 8
	var addrs []string
	for i := range n {
		addrs = append(addrs, fmt.Sprintf("192.0.2.%d", i+1))
	}
	agg, _ := fixture.FzAggregator(t, addrs...)
	agg.SetTimeline(fixture.FzStart, time.Second, true)
	agg.SetGroupBy([]string{"X-Served-By"})
	for i := range 20 * n {
		ep := i % n
		agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: ep, Start: fixture.FzStart.Add(time.Duration(i) * 10 * time.Millisecond),
			Latency: time.Duration(ep+1) * time.Millisecond, Status: 200, Groups: []string{fmt.Sprintf("gw-%d", i%(report.MaxGroupSeries+5))}}))
	}
	rep := fixture.FzClose(agg, 10*time.Second)
	if err := report.Validate(rep); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for i, s := range rep.Timeline.Series {
		if (s.Latency != nil) != (i < report.MaxLatencyEndpoints) {
			t.Errorf("endpoint %d: latency series %v; want one for the first %d only", i, s.Latency != nil, report.MaxLatencyEndpoints)
		}
		if s.Latency != nil {
			kept++
		}
	}
	if fams := rep.Timeline.Families; len(fams) != 1 || fams[0].Family != "ipv4" {
		t.Fatalf("family series %+v; want IPv4's", fams)
	} else {
		var total int64
		for i := range fams[0].Latency.Buckets() {
			total += fams[0].Latency.Total(i)
		}
		if total != rep.Totals.Requests {
			t.Errorf("IPv4's latencies over time count %d requests; want all %d", total, rep.Totals.Requests)
		}
	}
	if g := len(rep.Timeline.Groups); g == 0 || g > report.MaxGroupSeries {
		t.Errorf("%d instance series; want 1 to %d", g, report.MaxGroupSeries)
	}
	if kept != report.MaxLatencyEndpoints {
		t.Errorf("%d endpoints kept latencies over time; want %d", kept, report.MaxLatencyEndpoints)
	}
}

// Drops are not requests: they stay out of the timeline.
func TestTimelineIgnoresDrops(t *testing.T) {
	agg, _ := fixture.FzAggregator(t, "192.0.2.1")
	agg.SetTimeline(fixture.FzStart, time.Second, true)
	agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: 0, Start: fixture.FzStart.Add(1500 * time.Millisecond), Latency: time.Millisecond, Status: 200}))
	agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: 0, Start: fixture.FzStart.Add(2500 * time.Millisecond), Dropped: 9}))
	rep := fixture.FzClose(agg, 3*time.Second)
	if got := rep.Timeline.Series[0].Requests; !slices.Equal(got, []int64{0, 1}) {
		t.Errorf("requests per bucket %v; want [0 1]", got)
	}
}

func fzFailure(ep int, status int, server, body string, reused, exemplar bool) probe.Result {
	r := probe.Result{Endpoint: ep, Start: fixture.FzStart, Latency: 2 * time.Millisecond, Status: status, Server: server,
		BodyHash: probe.BodyHash([]byte(body)), Reused: reused}
	if exemplar {
		r.Exemplar = []byte(body)
	}
	return r
}

// Failures group by who produced them: status, Server header and the
// normalised body; transport errors by their class.
func TestFingerprintsGroupByProducer(t *testing.T) {
	agg, _ := fixture.FzAggregator(t, "192.0.2.1", "2001:db8::1")
	nginx := func(i int) string {
		return fmt.Sprintf("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center>"+
			"<hr><center>nginx</center> request %08x-%d at 2026-06-16T20:43:%02d.%03dZ</body></html>", i*7919, i, i%60, i)
	}
	azure := "<html><head><title>502 - Web server received an invalid response</title></head><body>Microsoft-Azure-Application-Gateway/v2</body></html>"
	for i := range 10 {
		agg.Add(fixture.Decide(fixture.Fail, fzFailure(1, 502, "nginx/1.22.1", nginx(i), i%3 == 0, i == 0)))
	}
	for i := range 3 {
		agg.Add(fixture.Decide(fixture.Fail, fzFailure(0, 502, "Microsoft-Azure-Application-Gateway/v2", azure, false, i == 0)))
	}
	// The same nginx page from the IPv4 address too.
	agg.Add(fixture.Decide(fixture.Fail, fzFailure(0, 502, "nginx/1.22.1", nginx(99), true, true)))
	for i := range 2 {
		agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: 0, Start: fixture.FzStart, Latency: time.Millisecond, Err: errors.New("read: connection reset by peer"),
			Class: probe.ClassReset, Reused: i == 1}))
	}
	// A reset after a 502's headers is a transport error, not a 502.
	agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: 1, Start: fixture.FzStart, Latency: time.Millisecond, Status: 502, Server: "nginx/1.22.1",
		Err: errors.New("unexpected EOF"), Class: probe.ClassEOF}))
	for range 5 {
		agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: 0, Start: fixture.FzStart, Latency: time.Millisecond, Status: 200}))
	}
	rep := fixture.FzClose(agg, time.Second)

	type fp struct {
		status         int
		err, server    string
		producer       string
		count, fresh   int64
		addrs          map[string]int64
		bodyHas        string
		bodyHashNotNil bool
	}
	want := []fp{
		{502, "", "nginx/1.22.1", "nginx", 11, 6, map[string]int64{"2001:db8::1": 10, "192.0.2.1": 1}, "502 Bad Gateway", true},
		{502, "", "Microsoft-Azure-Application-Gateway/v2", "Azure Application Gateway", 3, 3, map[string]int64{"192.0.2.1": 3}, "Microsoft-Azure", true},
		{0, "reset", "", "", 2, 1, map[string]int64{"192.0.2.1": 2}, "", false},
		{0, "eof", "", "", 1, 1, map[string]int64{"2001:db8::1": 1}, "", false},
	}
	got := rep.Fingerprints
	if len(got) != len(want) {
		t.Fatalf("%d fingerprints; want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Status != w.status || g.Error != w.err || g.Server != w.server || g.Producer != w.producer ||
			g.Count != w.count || g.Fresh != w.fresh || g.Reused != w.count-w.fresh || !mapsEqual(g.Addresses, w.addrs) ||
			!strings.Contains(g.Body, w.bodyHas) || (g.BodyHash != "") != w.bodyHashNotNil {
			t.Errorf("fingerprint %d = %+v\nwant %+v", i, g, w)
		}
	}
	if n := len(got[0].Body); n > probe.BodyPrefix {
		t.Errorf("fingerprint body of %d bytes; want at most %d", n, probe.BodyPrefix)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// Past maxFingerprints kinds, the rest count together: memory stays
// bounded, and every failure is still counted once.
func TestFingerprintsCap(t *testing.T) {
	agg, _ := fixture.FzAggregator(t, "192.0.2.1")
	const kinds = report.MaxFingerprints + 40
	for i := range kinds {
		agg.Add(fixture.Decide(fixture.Fail, fzFailure(0, 500, "app", fmt.Sprintf("error page kind %c%c", 'a'+i/26, 'a'+i%26), false, true)))
	}
	for range 3 { // more of kind 0: it keeps its own group
		agg.Add(fixture.Decide(fixture.Fail, fzFailure(0, 500, "app", "error page kind aa", false, false)))
	}
	rep := fixture.FzClose(agg, time.Second)
	if len(rep.Fingerprints) > report.MaxFingerprints+1 {
		t.Errorf("%d fingerprints; want at most %d (the cap, plus one for the rest)", len(rep.Fingerprints), report.MaxFingerprints+1)
	}
	var total int64
	var rest *report.Fingerprint
	for i, fp := range rep.Fingerprints {
		total += fp.Count
		if fp.Count == kinds-report.MaxFingerprints {
			rest = &rep.Fingerprints[i]
		}
	}
	if total != kinds+3 || total != rep.Totals.Failed {
		t.Errorf("fingerprints count %d failures; want %d (totals.failed %d)", total, kinds+3, rep.Totals.Failed)
	}
	if rest == nil {
		t.Errorf("no fingerprint groups the %d kinds past the cap: %+v", kinds-report.MaxFingerprints, rep.Fingerprints)
	}
	i := slices.IndexFunc(rep.Fingerprints, func(fp report.Fingerprint) bool { return fp.Body == "error page kind aa" })
	if i < 0 || rep.Fingerprints[i].Count != 4 {
		t.Errorf("fingerprints %+v; want kind aa in its own group, 4 times", rep.Fingerprints)
	}
}

// The client section lists the local addresses and ports a gateway's log
// shows as the client: all counted, the lowest maxPorts listed.
func TestClientPorts(t *testing.T) {
	agg, _ := fixture.FzAggregator(t, "192.0.2.1", "2001:db8::1")
	const n = report.MaxPorts + 500
	for i := n - 1; i >= 0; i-- { // highest first: the minimum must still be found
		local := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.200"), uint16(20000+i))
		ep := 0
		if i%2 == 1 {
			local, ep = netip.AddrPortFrom(netip.MustParseAddr("2001:db8::200"), uint16(20000+i)), 1
		}
		agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: ep, Start: fixture.FzStart, Latency: time.Millisecond, Status: 200, Local: local}))
		agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: ep, Start: fixture.FzStart, Latency: time.Millisecond, Status: 200, Local: local, Reused: true}))
	}
	// A refused connection has no local side.
	agg.Add(fixture.Decide(fixture.Fail, probe.Result{Endpoint: 0, Start: fixture.FzStart, Latency: time.Millisecond, Err: errors.New("refused"), Class: probe.ClassConnectRefused}))
	c := fixture.FzClose(agg, time.Second).Client
	if !slices.Equal(c.LocalAddresses, []string{"192.0.2.200", "2001:db8::200"}) {
		t.Errorf("local_addresses %v; want [192.0.2.200 2001:db8::200]", c.LocalAddresses)
	}
	if c.PortsCount != n || c.PortMin != 20000 || c.PortMax != 20000+n-1 {
		t.Errorf("ports_count %d, port_min %d, port_max %d; want %d, 20000, %d", c.PortsCount, c.PortMin, c.PortMax, n, 20000+n-1)
	}
	if len(c.Ports) != report.MaxPorts || c.Ports[0] != 20000 || c.Ports[report.MaxPorts-1] != 20000+report.MaxPorts-1 || !slices.IsSorted(c.Ports) {
		t.Errorf("ports: %d listed, %v .. %v; want the lowest %d in order", len(c.Ports), c.Ports[:3], c.Ports[len(c.Ports)-3:], report.MaxPorts)
	}

	empty, _ := fixture.FzAggregator(t, "192.0.2.1")
	ec := fixture.FzClose(empty, time.Second).Client
	if ec.LocalAddresses == nil || ec.Ports == nil || ec.PortsCount != 0 || ec.PortMin != 0 || ec.PortMax != 0 {
		t.Errorf("no connection: client %+v; want empty lists and zeros", ec)
	}
}

// Samples keep the response headers, secrets redacted by name, and the
// first bytes of the body as text.
func TestSampleRedactsSecrets(t *testing.T) {
	agg, _ := fixture.FzAggregator(t, "192.0.2.1", "2001:db8::1")
	h := http.Header{}
	secrets := map[string][]string{
		"Authorization":       {"Bearer s3cr3t-authz"},
		"Proxy-Authorization": {"Basic s3cr3t-proxy"},
		"Set-Cookie":          {"session=s3cr3t-cookie-1; Path=/", "csrf=s3cr3t-cookie-2"},
		"Cookie":              {"a=s3cr3t-cookie-3"},
		"X-Api-Key":           {"s3cr3t-apikey"},
		"X-Auth-Token":        {"s3cr3t-token"},
		"X-Client-Secret":     {"s3cr3t-client"},
	}
	for k, vs := range secrets {
		h[k] = vs
	}
	h.Set("Server", "nginx/1.22.1")
	h.Set("X-Request-Id", "pinprobe-abc-1-7")
	h.Add("Via", "1.1 gw-a")
	h.Add("Via", "1.1 gw-b")
	body := append([]byte("<html>502 Bad Gateway "), 0xff, 0xfe, 'o', 'k')
	local := netip.MustParseAddrPort("[2001:db8::200]:51234")
	remote := netip.MustParseAddrPort("[2001:db8::1]:443")
	agg.Add(fixture.Decide(fixture.Fail, probe.Result{
		Endpoint: 1, Start: fixture.FzStart.Add(1234 * time.Millisecond), Latency: 3100 * time.Microsecond, TTFB: 3 * time.Millisecond,
		Status: 502, Reused: true, Local: local, Remote: remote, RequestID: "pinprobe-abc-1-7",
		Evidence: &probe.ResponseEvidence{Proto: "HTTP/1.1", Header: h, Body: body},
	}))
	agg.Add(fixture.Decide(fixture.Fail, probe.Result{
		Endpoint: 0, Start: fixture.FzStart, Latency: time.Millisecond, Err: errors.New("dial tcp 192.0.2.1:443: connect: connection refused"),
		Class: probe.ClassConnectRefused, RequestID: "pinprobe-abc-0-1", Evidence: &probe.ResponseEvidence{},
	}))
	rep := fixture.FzClose(agg, 2*time.Second)

	s6 := rep.Endpoints[1].Samples
	if len(s6) != 1 {
		t.Fatalf("%d samples on 2001:db8::1; want 1", len(s6))
	}
	s := s6[0]
	for k := range secrets {
		if s.Headers[k] != collect.Redacted {
			t.Errorf("header %s = %q; want %s", k, s.Headers[k], collect.Redacted)
		}
	}
	for k, v := range map[string]string{"Server": "nginx/1.22.1", "X-Request-Id": "pinprobe-abc-1-7", "Via": "1.1 gw-a, 1.1 gw-b"} {
		if s.Headers[k] != v {
			t.Errorf("header %s = %q; want %q", k, s.Headers[k], v)
		}
	}
	if s.Status != 502 || s.RequestID != "pinprobe-abc-1-7" || s.Local != local.String() || s.Remote != remote.String() ||
		!s.Reused || s.Proto != "HTTP/1.1" || s.LatencyMS != 3.1 || s.TTFBMS != 3 || !s.At.Equal(fixture.FzStart.Add(1234*time.Millisecond)) || s.Error != "" {
		t.Errorf("sample %+v; want the 502's status, request ID, ip:ports, reuse, protocol, timings and time", s)
	}
	if want := `<html>502 Bad Gateway \xff\xfeok`; s.Body != want {
		t.Errorf("body %q; want %q (invalid UTF-8 escaped)", s.Body, want)
	}
	e := rep.Endpoints[0].Samples
	if len(e) != 1 || e[0].Class != "connect_refused" || !strings.Contains(e[0].Error, "connection refused") || e[0].Status != 0 ||
		e[0].Local != "" || e[0].Remote != "" || e[0].Headers == nil {
		t.Errorf("error sample %+v; want class connect_refused, its message, no status or addresses, empty headers", e)
	}

	if out := jsonOf(t, rep); strings.Contains(out, "s3cr3t") {
		t.Errorf("the JSON report holds a secret:\n%s", out)
	}
}

// The group of kinds past the cap mixes producers: it must not carry the
// page, and so the producer, of whichever kind happened to overflow first.
func TestFingerprintsOverflowClaimsNoProducer(t *testing.T) {
	agg, _ := fixture.FzAggregator(t, "192.0.2.1")
	for i := range report.MaxFingerprints {
		agg.Add(fixture.Decide(fixture.Fail, fzFailure(0, 500, "app", fmt.Sprintf("error page kind %c%c", 'a'+i/26, 'a'+i%26), false, true)))
	}
	agg.Add(fixture.Decide(fixture.Fail, fzFailure(0, 502, "", "<html><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></html>", false, true)))
	agg.Add(fixture.Decide(fixture.Fail, fzFailure(0, 503, "", "no healthy upstream", false, true)))
	agg.Add(fixture.Decide(fixture.Fail, fzFailure(0, 504, "", "<html><body>Microsoft-Azure-Application-Gateway/v2</body></html>", false, true)))
	rep := fixture.FzClose(agg, time.Second)
	for _, fp := range rep.Fingerprints {
		if fp.Count == 3 && (fp.Producer != "" || fp.Body != "") {
			t.Errorf("the group of 3 kinds past the cap (nginx, Envoy, Azure) claims producer %q and body %q", fp.Producer, fp.Body)
		}
	}
}
