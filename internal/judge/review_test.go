package judge

// Shapes that are easy to judge wrong, each with what the verdict must
// say.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
)

// rvGroup adds a group to r: counts per address as "addr": {failed, n}.
func rvGroup(r *report.Report, header, value string, by map[string][2]int64) {
	g := report.Group{Header: header, Value: value, Addresses: map[string]int64{}, FailedBy: map[string]int64{}}
	for a, c := range by {
		g.Addresses[a] += c[1]
		g.FailedBy[a] += c[0]
		g.Requests += c[1]
		g.Failed += c[0]
	}
	g.OK = g.Requests - g.Failed
	if g.Requests > 0 {
		g.FailureRate = stat.Round(float64(g.Failed)/float64(g.Requests), 6)
	}
	if g.Failed > 0 {
		g.Status = map[string]int64{"502": g.Failed, "200": g.OK}
	}
	r.Groups = append(r.Groups, g)
}

// rvInstances gives r a header whose gw-1 answers the n requests of
// 192.0.2.1 and of 192.0.2.3, and gw-2 to gw-5 each a quarter of
// 192.0.2.2's n, failing as failed says.
func rvInstances(r *report.Report, header string, n int64, failed [4]int64) {
	rvGroup(r, header, "gw-1", map[string][2]int64{"192.0.2.1": {0, n}, "192.0.2.3": {0, n}})
	for k, f := range failed {
		rvGroup(r, header, fmt.Sprintf("gw-%d", k+2), map[string][2]int64{"192.0.2.2": {f, n / 4}})
	}
}

// twoURLs are 192.0.2.1 to 192.0.2.3 on two URLs, n requests each, of
// which 192.0.2.2 failed failed on each URL.
func twoURLs(n, failed int64) []VtEndpoint {
	var eps []VtEndpoint
	for k := range 2 {
		tg := fmt.Sprintf("http://h.test/u%d", k)
		eps = append(eps, VtEndpoint{Addr: "192.0.2.1", N: n, target: tg}, VtEndpoint{Addr: "192.0.2.2", Failed: failed, N: n, target: tg}, VtEndpoint{Addr: "192.0.2.3", N: n, target: tg})
	}
	return eps
}

// rvStatus gives every scope of r its statuses: 200 for the successes,
// 502 for the failures.
func rvStatus(r *report.Report) {
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		e.Status = map[string]int64{"200": e.OK}
		if e.Failed > 0 {
			e.Status["502"] = e.Failed
		}
	}
	for _, f := range r.Families {
		f.Status = map[string]int64{"200": f.OK, "502": f.Failed}
	}
}

// rvConns gives every endpoint of r n connections.
func rvConns(r *report.Report, n int64) {
	for i := range r.Endpoints {
		r.Endpoints[i].Conns = &report.Conns{Connections: n, Requests: r.Endpoints[i].Requests, Failed: r.Endpoints[i].Failed}
	}
}

// kinds says each suspect of v as "kind address group", sorted.
func kinds(v report.Verdict) []string {
	var out []string
	for _, s := range v.Suspects {
		out = append(out, strings.Join(strings.Fields(s.Kind+" "+s.Address+" "+s.Group), " "))
	}
	slices.Sort(out)
	return out
}

// rvEndpoint turns simulated results into an endpoint of the report.
func rvEndpoint(addr, target string, rs []simResult) report.Endpoint {
	e := report.Endpoint{Address: addr, Family: "ipv4", Target: target, Host: "app.example.com", Port: 443}
	if addr[0] != '1' || len(addr) > 15 {
		e.Family = "ipv6"
	}
	e.Status = map[string]int64{}
	for _, r := range rs {
		e.Requests++
		if r.failed {
			e.Failed++
			e.Status["502"]++
		} else {
			e.OK++
			e.Status["200"]++
		}
	}
	e.FailureRate = stat.Round(float64(e.Failed)/float64(max(e.Requests, 1)), 6)
	c := simConns(rs)
	e.Conns = &c
	return e
}

// rvAssemble is assemble with the plan's rate and 4 requests a connection.
func rvAssemble(eps []report.Endpoint, rate float64) *report.Report {
	r := assemble(eps)
	r.Plan.Rate = rate
	r.Plan.ConnRequests = 4
	return r
}

// rvRun: nAddr addresses at perEp requests/s each, address 0 failing by bad.
func rvRun(rng *rand.Rand, nAddr int, perEp float64, secs float64, perConn int, bad func(time.Duration, int) float64, instances int) *report.Report {
	var eps []report.Endpoint
	for a := range nAddr {
		f := steady(0)
		if a == 0 {
			f = bad
		}
		cfg := simConfig{requests: int(perEp * secs), rate: perEp, perConn: perConn, fail: f, instances: instances, latency: 5 * time.Millisecond, closeProb: 0}
		rs := simulate(cfg, rng)
		eps = append(eps, rvEndpoint(fmt.Sprintf("192.0.2.%d", a+1), "https://app.example.com/", rs))
	}
	return rvAssemble(eps, perEp*float64(nAddr))
}

// An instance names itself, the other instance of its address sends no
// header: the instance is compared with every other response of its
// address, not said to coincide with it.
func TestScopeHeaderOnSomeResponses(t *testing.T) {
	r := VtReport(VtEndpoint{Addr: "192.0.2.1", N: 400}, VtEndpoint{Addr: "192.0.2.2", Failed: 100, N: 400}, VtEndpoint{Addr: "192.0.2.3", N: 400})
	rvStatus(r)
	rvGroup(r, "X-Served-By", "gw-1", map[string][2]int64{"192.0.2.1": {0, 400}})
	rvGroup(r, "X-Served-By", "gw-a", map[string][2]int64{"192.0.2.2": {100, 200}}) // gw-b: 200 answers, no header
	rvGroup(r, "X-Served-By", "gw-3", map[string][2]int64{"192.0.2.3": {0, 400}})
	v := Judge(r, Once())
	if got, want := kinds(v), []string{"group 192.0.2.2 X-Served-By: gw-a"}; !slices.Equal(got, want) {
		t.Errorf("suspects %v; want %v\n%s", got, want, v.Summary)
	}
	if strings.Contains(v.Summary, "agrees") {
		t.Errorf("summary says the header agrees with the address, though half its responses named no instance:\n%s", v.Summary)
	}
}

// Two headers name the same failing instance, and the address fails on its
// other instances too: the address stays a suspect (each header's
// instances subtracted once), and the instance is one suspect, said with
// both names.
func TestScopeTwoHeadersOneInstance(t *testing.T) {
	r := VtReport(VtEndpoint{Addr: "192.0.2.1", N: 400}, VtEndpoint{Addr: "192.0.2.2", Failed: 130, N: 400}, VtEndpoint{Addr: "192.0.2.3", N: 400})
	rvStatus(r)
	for _, h := range []string{"X-Served-By", "X-Instance"} {
		rvInstances(r, h, 400, [4]int64{10, 100, 10, 10})
	}
	v := Judge(r, Once())
	if got, want := kinds(v), []string{"endpoint 192.0.2.2", "group 192.0.2.2 X-Served-By: gw-3"}; !slices.Equal(got, want) {
		t.Errorf("suspects %v; want %v\n%s", got, want, v.Summary)
	}
	if !strings.Contains(v.Headline, "X-Served-By: gw-3 (also X-Instance: gw-3)") {
		t.Errorf("headline %q; want the instance said once, with both its names", v.Headline)
	}
	rvConns(r, 200)
	if _, ok := Settle(r, Judge(r, AtLook(300, false))); !ok {
		t.Errorf("not settled: the other header's name of the suspect instance must not need bounding")
	}
}

// The same shape on two URLs: an instance's counts are its address's over
// both, and the address still fails beyond it.
func TestScopeTwoURLsBeyondInstances(t *testing.T) {
	r := VtReport(twoURLs(400, 130)...)
	rvStatus(r)
	rvInstances(r, "X-Served-By", 800, [4]int64{20, 200, 20, 20})
	v := Judge(r, Once())
	if got, want := kinds(v), []string{"endpoint 192.0.2.2", "endpoint 192.0.2.2", "group 192.0.2.2 X-Served-By: gw-3"}; !slices.Equal(got, want) {
		t.Errorf("suspects %v; want %v\n%s", got, want, v.Summary)
	}
	for _, n := range v.Notes {
		if strings.Contains(n, "only through") {
			t.Errorf("a note says the address fails only through its instance: %s", n)
		}
	}
}

// An instance that is the whole of two addresses, .1 and .2, the other
// instance the whole of .3 and .4: with one of its addresses failing, the
// failing address is named; with both failing, significant where neither
// address alone is, the instance is named. Either way the header is not
// said to "agree" with an address.
func TestScopeUnion(t *testing.T) {
	for _, tc := range []struct {
		name      string
		f1, f2, n int64
		want      []string
	}{
		{"one fails", 0, 100, 200, []string{"endpoint 192.0.2.2"}},
		{"both fail", 7, 7, 30, []string{"group X-Served-By: gw-x"}},
	} {
		r := VtReport(VtEndpoint{Addr: "192.0.2.1", Failed: tc.f1, N: tc.n}, VtEndpoint{Addr: "192.0.2.2", Failed: tc.f2, N: tc.n},
			VtEndpoint{Addr: "192.0.2.3", N: tc.n}, VtEndpoint{Addr: "192.0.2.4", N: tc.n})
		rvStatus(r)
		rvGroup(r, "X-Served-By", "gw-x", map[string][2]int64{"192.0.2.1": {tc.f1, tc.n}, "192.0.2.2": {tc.f2, tc.n}})
		rvGroup(r, "X-Served-By", "gw-y", map[string][2]int64{"192.0.2.3": {0, tc.n}, "192.0.2.4": {0, tc.n}})
		v := Judge(r, Once())
		if got := kinds(v); !slices.Equal(got, tc.want) || strings.Contains(v.Summary, "agrees") {
			t.Errorf("%s: suspects %v; want %v, and no header said to agree\n%s", tc.name, got, tc.want, v.Summary)
		}
	}
}

// Behind one address a sticky instance fails every request and the other
// three fail 15%: the connections are named, and the address too, since
// its other connections fail more than the other addresses do.
func TestScopeConnectionsAndAddress(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 12))
	bad := func(_ time.Duration, inst int) float64 {
		if inst == 0 {
			return 1
		}
		return 0.15
	}
	r := rvRun(rng, 3, 10, 60, 4, bad, 4)
	v := Judge(r, Once())
	if got, want := kinds(v), []string{"connections 192.0.2.1", "endpoint 192.0.2.1"}; !slices.Equal(got, want) {
		t.Errorf("suspects %v; want %v\n%s", got, want, v.Summary)
	}
}

// An address that left DNS with few requests does not keep
// --until-verdict from settling: no more of its requests will come.
func TestSettleLeavesRemovedAddresses(t *testing.T) {
	r := VtReport(VtEndpoint{Addr: "192.0.2.1", N: 4000}, VtEndpoint{Addr: "192.0.2.2", Failed: 4000, N: 4000}, VtEndpoint{Addr: "192.0.2.3", N: 4000}, VtEndpoint{Addr: "192.0.2.9", N: 40})
	rvStatus(r)
	rvConns(r, 200)
	r.Endpoints[3].Conns.Connections = 10
	r.Endpoints[3].RemovedAt = &report.Time{}
	if st, ok := Settle(r, Judge(r, AtLook(300, false))); !ok {
		t.Errorf("not settled: %+v", st)
	}
}

// An instance fault on two URLs settles: the instance's counts are
// subtracted from its address over both URLs.
func TestSettleTwoURLsInstance(t *testing.T) {
	r := VtReport(twoURLs(4000, 1000)...)
	rvStatus(r)
	rvConns(r, 200)
	rvInstances(r, "X-Served-By", 8000, [4]int64{0, 2000, 0, 0})
	v := Judge(r, AtLook(300, false))
	if st, ok := Settle(r, v); !ok || !slices.Equal(kinds(v), []string{"group 192.0.2.2 X-Served-By: gw-3"}) {
		t.Errorf("suspects %v, settled %v %+v; want gw-3 alone, settled", kinds(v), ok, st)
	}
}

// Every suspect is named on a test the verdict lists and counts: the test
// of an address against the other family's addresses too.
func TestEverySuspectHasItsCountedTest(t *testing.T) {
	r := VtReport(VtEndpoint{Addr: "2001:db8::1", Failed: 100, N: 100}, VtEndpoint{Addr: "2001:db8::2", Failed: 30, N: 100},
		VtEndpoint{Addr: "2001:db8::3", N: 100},
		VtEndpoint{Addr: "192.0.2.1", N: 250}, VtEndpoint{Addr: "192.0.2.2", N: 250}, VtEndpoint{Addr: "192.0.2.3", N: 250}, VtEndpoint{Addr: "192.0.2.4", N: 250})
	rvStatus(r)
	v := Judge(r, Once())
	if v.Level.Tests < 2+len(r.Endpoints)+len(r.Endpoints) {
		t.Errorf("level counts %d tests; want the families, each address within its URL and against the other family", v.Level.Tests)
	}
	for _, s := range v.Suspects {
		if !slices.ContainsFunc(v.Tests, func(t report.Test) bool { return t.P == s.P && t.Significant }) {
			t.Errorf("suspect %s (p=%g) is named on no significant test listed", s.Address, s.P)
		}
	}
	if !strings.Contains(v.Summary, "on the other family's endpoints") {
		t.Errorf("summary does not say 2001:db8::2 was compared with the other family:\n%s", v.Summary)
	}
}

// TestStickyIsNotATimeWindow: an instance that fails every request, one
// of 2 or 3 behind an address that a few connections at a low rate reach,
// sometimes holds every connection of the moment: then every connection
// open fails, which looks like a time window. No connection of such a
// window ever succeeds outside it, and so few connections could all be on
// a failing instance: the verdict must not say the address failed in
// windows. A flapping address, whose connections fail only while a
// window lasts, still does.
func TestStickyIsNotATimeWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 12))
	sticky := func(_ time.Duration, inst int) float64 {
		if inst == 0 {
			return 1
		}
		return 0
	}
	inWindows := func(v report.Verdict) bool {
		for _, s := range v.Suspects {
			if strings.Contains(s.How, " window") {
				return true
			}
		}
		return slices.ContainsFunc(v.Notes, func(n string) bool { return strings.Contains(n, "failed in ") && strings.Contains(n, " window") })
	}
	for _, c := range []struct {
		instances, perConn int
		perEp, secs        float64
	}{{2, 16, 1.5, 60}, {3, 16, 1.5, 60}, {3, 8, 3.4, 30}} {
		claims := 0
		for range 100 {
			if v := Judge(rvRun(rng, 3, c.perEp, c.secs, c.perConn, sticky, c.instances), Once()); inWindows(v) {
				claims++
			}
		}
		if claims > 0 {
			t.Errorf("1 failing instance of %d, %v req/s per address, %d requests a connection, %v s: %d of 100 runs said time windows; want none",
				c.instances, c.perEp, c.perConn, c.secs, claims)
		}
	}
	flap := func(at time.Duration, _ int) float64 {
		if (at/time.Second)%2 == 1 {
			return 1
		}
		return 0
	}
	if v := Judge(rvRun(rng, 3, 10, 120, 4, flap, 4), Once()); !inWindows(v) {
		t.Errorf("an address failing every other second: %s; want it said to fail in windows", v.Summary)
	}
}

// A URL that fails on every address is no suspect to stop on: the verdict
// follows the URL, and --until-verdict goes on to the end (README).
func TestSettleNotOnAFailingURL(t *testing.T) {
	var eps []VtEndpoint
	for _, a := range []string{"192.0.2.1", "192.0.2.2"} {
		eps = append(eps, VtEndpoint{Addr: a, N: 4000, target: "http://h.test/ok"}, VtEndpoint{Addr: a, Failed: 4000, N: 4000, target: "http://h.test/broken"})
	}
	r := VtReport(eps...)
	rvStatus(r)
	rvConns(r, 200)
	v := Judge(r, AtLook(300, false))
	if !strings.Contains(v.Summary, "follow the URL") {
		t.Fatalf("summary %q; want the failures to follow the URL", v.Summary)
	}
	if st, ok := Settle(r, v); ok {
		t.Errorf("settled on a failing URL: %+v; want the run to go on", st)
	}
}
