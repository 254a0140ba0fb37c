package judge

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/report"
)

// otEndpoint is an address whose failed requests failed one way: an
// error class ("timeout", "connect_refused") or a status ("503").
type otEndpoint struct {
	addr      string
	failed, n int64
	how       string
}

// otReport is VtReport with each endpoint's failures said: statuses and
// error classes on the endpoints, added up into families and totals.
func otReport(eps ...otEndpoint) *report.Report {
	var out []report.Endpoint
	for _, e := range eps {
		ep := vtEndpoint(VtEndpoint{Addr: e.addr, Failed: e.failed, N: e.n})
		ep.Status, ep.Errors = map[string]int64{}, map[string]int64{}
		if e.n > e.failed {
			ep.Status["200"] = e.n - e.failed
		}
		switch _, err := strconv.Atoi(e.how); {
		case e.failed == 0:
		case err == nil:
			ep.Status[e.how] = e.failed
		default:
			ep.Errors[e.how] = e.failed
		}
		out = append(out, ep)
	}
	return assemble(out)
}

// An outage reads as an outage: every request to the only address, or to
// every address, failed, and the verdict says how, not that the failures
// are "spread" or "not attributable to one address".
func TestOutage(t *testing.T) {
	for _, tt := range []struct {
		name     string
		eps      []otEndpoint
		status   string
		headline string
		summary  []string
	}{
		{"the only address times out", []otEndpoint{{"127.0.0.1", 30, 30, "timeout"}}, report.VerdictSpread,
			"every request to the only address, 127.0.0.1, timed out",
			[]string{"Every request to the only address, 127.0.0.1, timed out (30 of 30). This is an outage, not an intermittent fault"}},
		{"the only address, two causes", []otEndpoint{{"127.0.0.1", 30, 30, "timeout"}}, report.VerdictSpread, "", nil}, // filled below
		{"every address, one cause", []otEndpoint{{"127.0.0.1", 40, 40, "503"}, {"127.0.0.2", 40, 40, "503"}, {"::1", 40, 40, "503"}},
			report.VerdictSpread, "every request to every address (127.0.0.1, 127.0.0.2 and ::1) was answered 503",
			[]string{"Every request to every address failed (120 of 120): 127.0.0.1 40 of 40 answered 503, 127.0.0.2 40 of 40 answered 503 and ::1 40 of 40 answered 503.",
				"The service is down everywhere (or the path to it from where it was probed is), not one backend"}},
		{"every address, different causes", []otEndpoint{{"127.0.0.1", 40, 40, "timeout"}, {"127.0.0.2", 40, 40, "timeout"}, {"::1", 40, 40, "connect_refused"}},
			report.VerdictSpread, "every request to every address failed: timed out on 127.0.0.1 and 127.0.0.2; refused on ::1",
			[]string{"down everywhere", "The addresses fail in different ways, so there may be more than one cause"}},
		{"nearly every request everywhere", []otEndpoint{{"127.0.0.1", 95, 100, "502"}, {"127.0.0.2", 97, 100, "502"}, {"::1", 100, 100, "502"}},
			report.VerdictSpread, "nearly every request to every address (127.0.0.1, 127.0.0.2 and ::1) was answered 502 (95%–100% each)",
			[]string{"The service is down nearly everywhere", "every address failed at least 90% of its requests, and only 8 of 300 succeeded"}},
		{"nearly everywhere, one address worse still", []otEndpoint{{"127.0.0.1", 950, 1000, "502"}, {"127.0.0.2", 950, 1000, "502"}, {"::1", 1000, 1000, "502"}},
			report.VerdictConcentrated, "nearly every request to every address (127.0.0.1, 127.0.0.2 and ::1) was answered 502 (95%–100% each); IPv6 (::1) answers 502",
			[]string{"The service is down nearly everywhere", "On top of that, failures concentrate on IPv6 (::1)"}},
	} {
		r := otReport(tt.eps...)
		if tt.name == "the only address, two causes" {
			e := &r.Endpoints[0]
			e.Errors = map[string]int64{"timeout": 20, "connect_refused": 10}
			tt.headline = "every request to the only address, 127.0.0.1, failed (timed out or refused)"
			tt.summary = []string{"Every request to the only address, 127.0.0.1, failed (30 of 30): 20 timed out, 10 refused."}
		}
		v := Judge(r, Once())
		if v.Status != tt.status || v.Headline != tt.headline || !v.Outage {
			t.Errorf("%s: %s %q, outage %v; want %s %q, an outage", tt.name, v.Status, v.Headline, v.Outage, tt.status, tt.headline)
		}
		for _, s := range tt.summary {
			if !strings.Contains(v.Summary, s) {
				t.Errorf("%s: summary lacks %q:\n%s", tt.name, s, v.Summary)
			}
		}
		for _, w := range []string{"spread", "not attributable", "cannot be pinned"} {
			if strings.Contains(v.Summary, w) || strings.Contains(v.Headline, w) {
				t.Errorf("%s: the verdict says %q of an outage: %q\n%s", tt.name, w, v.Headline, v.Summary)
			}
		}
	}
	// Not an outage: one address of several, or failures short of nearly
	// every request, read as before.
	for _, eps := range [][]otEndpoint{
		{{"127.0.0.1", 40, 40, "timeout"}, {"127.0.0.2", 0, 40, ""}},
		{{"127.0.0.1", 30, 40, "503"}, {"127.0.0.2", 40, 40, "503"}},
		{{"127.0.0.1", 3, 10, "503"}},
	} {
		if v := Judge(otReport(eps...), Once()); v.Outage || strings.Contains(v.Headline, "every request") || strings.Contains(v.Summary, "outage") {
			t.Errorf("%v: %s %q — %s; want no outage", eps, v.Status, v.Headline, v.Summary)
		}
	}
}

// In a total outage every latency is a failure's: an address that times
// out is not "slow" against one that refuses, it fails another way.
func TestOutageNamesNoSlowAddress(t *testing.T) {
	r := otReport(otEndpoint{"127.0.0.1", 200, 200, "timeout"}, otEndpoint{"::1", 200, 200, "connect_refused"})
	for i, base := range []int64{300_000, 400} { // µs: 300ms timeouts, instant refusals
		h := report.NewHist()
		for k := range int64(200) {
			_ = h.RecordValue(base + k)
		}
		r.Endpoints[i].HDR = encodeHist(t, h)
	}
	if v := Judge(r, Once()); len(v.Slow) != 0 || hasNote(v, "slow") {
		t.Errorf("slow %+v, notes %q; want no latency finding when every request failed", v.Slow, v.Notes)
	}
	r.Endpoints[1].Failed, r.Endpoints[1].OK = 150, 50 // some answers: latency is compared again
	r.Totals.Failed, r.Totals.OK = 350, 50
	if v := Judge(r, Once()); len(v.Slow) != 1 {
		t.Errorf("slow %+v; want 127.0.0.1 named once some requests were answered", v.Slow)
	}
}

// TestOutageNeedsRequests: one failed request is no outage shown; five of
// five are.
func TestOutageNeedsRequests(t *testing.T) {
	for _, tt := range []struct {
		n      int64
		outage bool
	}{{1, false}, {4, false}, {5, true}} {
		v := Judge(otReport(otEndpoint{"127.0.0.1", tt.n, tt.n, "timeout"}), Once())
		if v.Outage != tt.outage || strings.Contains(v.Summary, "outage") != tt.outage {
			t.Errorf("%d of %d timed out: outage %v, %q; want %v", tt.n, tt.n, v.Outage, v.Summary, tt.outage)
		}
	}
}
