package judge

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// VtEndpoint is one endpoint's counts for a constructed report.
type VtEndpoint struct {
	Addr      string
	Failed, N int64
	target    string // "https://app.example.com/" when empty
}

// VtReport builds a report whose endpoints, families and totals hold the
// given counts, as Aggregator.Close fills them before it calls Judge.
func VtReport(eps ...VtEndpoint) *report.Report {
	var out []report.Endpoint
	for _, e := range eps {
		out = append(out, vtEndpoint(e))
	}
	return assemble(out)
}

// vtEndpoint is e as a report's endpoint.
func vtEndpoint(e VtEndpoint) report.Endpoint {
	fam := "ipv4"
	if netip.MustParseAddr(e.Addr).Is6() {
		fam = "ipv6"
	}
	target := e.target
	if target == "" {
		target = "https://app.example.com/"
	}
	ep := report.Endpoint{Address: e.Addr, Family: fam, Target: target, Host: "app.example.com", Port: 443}
	ep.Requests, ep.Failed, ep.OK = e.N, e.Failed, e.N-e.Failed
	if e.N > 0 {
		ep.FailureRate = stat.Round(float64(e.Failed)/float64(e.N), 6)
	}
	return ep
}

// assemble is a report of eps, their counts, statuses and errors added up
// into their families and the totals.
func assemble(eps []report.Endpoint) *report.Report {
	r := &report.Report{Families: map[string]*report.Stats{}}
	add := func(s *report.Stats, e *report.Endpoint) {
		s.Requests += e.Requests
		s.Failed += e.Failed
		s.OK += e.OK
		for k, v := range e.Status {
			if s.Status == nil {
				s.Status = map[string]int64{}
			}
			s.Status[k] += v
		}
		for k, v := range e.Errors {
			if s.Errors == nil {
				s.Errors = map[string]int64{}
			}
			s.Errors[k] += v
		}
		if s.Requests > 0 {
			s.FailureRate = stat.Round(float64(s.Failed)/float64(s.Requests), 6)
		}
	}
	for i := range eps {
		e := &eps[i]
		r.Endpoints = append(r.Endpoints, *e)
		if r.Families[e.Family] == nil {
			r.Families[e.Family] = &report.Stats{}
		}
		add(r.Families[e.Family], e)
		add(&r.Totals, e)
	}
	return r
}

// noteWith is the first note of v that starts with one of prefixes, or "".
func noteWith(v report.Verdict, prefixes ...string) string {
	for _, n := range v.Notes {
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) {
				return n
			}
		}
	}
	return ""
}

// hasNote reports whether a note of v says s.
func hasNote(v report.Verdict, s string) bool {
	return slices.ContainsFunc(v.Notes, func(n string) bool { return strings.Contains(n, s) })
}

// VtSuspects lists the addresses of v's suspects in order.
func VtSuspects(v report.Verdict) []string {
	out := []string{}
	for _, s := range v.Suspects {
		out = append(out, s.Address)
	}
	return out
}

func vtString(eps []VtEndpoint) string {
	var parts []string
	for _, e := range eps {
		parts = append(parts, fmt.Sprintf("%s %d/%d", e.Addr, e.Failed, e.N))
	}
	return strings.Join(parts, ", ")
}

// A handful of requests never names a backend, whatever the split.
func TestJudgeHandfulIsNeverConcentrated(t *testing.T) {
	cases := [][]VtEndpoint{
		{{Addr: "127.0.0.1", Failed: 5, N: 5}, {Addr: "127.0.0.2", N: 5}},
		{{Addr: "::1", Failed: 5, N: 5}, {Addr: "127.0.0.1", N: 5}},
		{{Addr: "127.0.0.1", N: 5}, {Addr: "::1", Failed: 5, N: 5}},
		{{Addr: "::1", Failed: 5, N: 5}, {Addr: "127.0.0.1", N: 5}, {Addr: "127.0.0.2", N: 5}},
		{{Addr: "2001:db8::1", Failed: 5, N: 5}, {Addr: "2001:db8::2", Failed: 5, N: 5}, {Addr: "192.0.2.1", N: 5}},
		{{Addr: "::1", Failed: 3, N: 3}, {Addr: "127.0.0.1", N: 3}},
		{{Addr: "::1", Failed: 1, N: 1}, {Addr: "127.0.0.1", N: 1}},
	}
	for _, eps := range cases {
		v := Judge(VtReport(eps...), Once())
		if v.Status != report.VerdictSpread || len(v.Suspects) != 0 {
			t.Errorf("%s: verdict %s, suspects %v; want spread, no suspect\nsummary: %s", vtString(eps), v.Status, VtSuspects(v), v.Summary)
		}
		for _, tt := range v.Tests {
			if tt.Significant {
				t.Errorf("%s: test %q (p=%g) called significant", vtString(eps), tt.Scope, tt.P)
			}
		}
	}
}

// 100% against 0% over 40 or more requests each is always named, whatever
// the number of healthy endpoints and their families.
func TestJudgePlainIsAlwaysConcentrated(t *testing.T) {
	for _, n := range []int64{40, 41, 50, 100, 1000} {
		for others := 1; others <= 8; others++ {
			for _, bad := range []string{"192.0.2.99", "2001:db8::99"} {
				for _, otherFam := range []string{"v4", "v6", "mixed"} {
					eps := []VtEndpoint{{Addr: bad, Failed: n, N: n}}
					for i := range others {
						a := fmt.Sprintf("192.0.2.%d", i+1)
						if otherFam == "v6" || (otherFam == "mixed" && i%2 == 1) {
							a = fmt.Sprintf("2001:db8::%d", i+1)
						}
						eps = append(eps, VtEndpoint{Addr: a, N: n})
					}
					v := Judge(VtReport(eps...), Once())
					if v.Status != report.VerdictConcentrated || !slices.Equal(VtSuspects(v), []string{bad}) {
						t.Errorf("%s: verdict %s, suspects %v; want concentrated on %s\nsummary: %s",
							vtString(eps), v.Status, VtSuspects(v), bad, v.Summary)
					}
				}
			}
		}
	}
}

// The seed incident on a bigger scale: four IPv6 addresses all fail; none
// of them hides the others, and the family is named.
func TestJudgeAllIPv6FailingNamesEveryAddress(t *testing.T) {
	want := []string{"2001:db8::1", "2001:db8::2", "2001:db8::3", "2001:db8::4"}
	cases := map[string][]VtEndpoint{
		"two healthy IPv4": {
			{Addr: "192.0.2.1", N: 40}, {Addr: "192.0.2.2", N: 40},
			{Addr: "2001:db8::1", Failed: 40, N: 40}, {Addr: "2001:db8::2", Failed: 40, N: 40},
			{Addr: "2001:db8::3", Failed: 40, N: 40}, {Addr: "2001:db8::4", Failed: 40, N: 40},
		},
		"one healthy IPv4": {
			{Addr: "192.0.2.1", N: 40},
			{Addr: "2001:db8::4", Failed: 40, N: 40}, {Addr: "2001:db8::3", Failed: 40, N: 40},
			{Addr: "2001:db8::2", Failed: 40, N: 40}, {Addr: "2001:db8::1", Failed: 40, N: 40},
		},
		"IPv4 with a stray failure": {
			{Addr: "192.0.2.1", Failed: 1, N: 200}, {Addr: "192.0.2.2", N: 200},
			{Addr: "2001:db8::1", Failed: 200, N: 200}, {Addr: "2001:db8::2", Failed: 200, N: 200},
			{Addr: "2001:db8::3", Failed: 200, N: 200}, {Addr: "2001:db8::4", Failed: 200, N: 200},
		},
	}
	for name, eps := range cases {
		v := Judge(VtReport(eps...), Once())
		if v.Status != report.VerdictConcentrated || !slices.Equal(VtSuspects(v), want) {
			t.Errorf("%s: verdict %s, suspects %v; want concentrated on %v\nsummary: %s", name, v.Status, VtSuspects(v), want, v.Summary)
		}
		if !strings.Contains(v.Summary, "IPv6") {
			t.Errorf("%s: summary does not name IPv6: %s", name, v.Summary)
		}
		for _, a := range want {
			if !strings.Contains(v.Summary, a) {
				t.Errorf("%s: summary does not name %s: %s", name, a, v.Summary)
			}
		}
		for _, s := range v.Suspects {
			if s.Family != "ipv6" || s.FailureRate != 1 || s.CI95[1] != 1 || s.CI95[0] <= 0.9 || s.P <= 0 || s.P >= 1e-9 {
				t.Errorf("%s: suspect %+v; want ipv6, rate 1, CI (0.9, 1], 0 < p < 1e-9", name, s)
			}
		}
	}
}

// One bad address of two in a family is that address's fault, not the
// family's: the summary must not send the reader after IPv4.
func TestJudgeOneBadAddressIsNotItsFamily(t *testing.T) {
	eps := []VtEndpoint{{Addr: "127.0.0.1", N: 200}, {Addr: "127.0.0.2", Failed: 40, N: 200}, {Addr: "::1", N: 200}}
	v := Judge(VtReport(eps...), Once())
	if v.Status != report.VerdictConcentrated || !slices.Equal(VtSuspects(v), []string{"127.0.0.2"}) {
		t.Fatalf("verdict %s, suspects %v; want concentrated on 127.0.0.2\nsummary: %s", v.Status, VtSuspects(v), v.Summary)
	}
	if strings.Contains(v.Summary, "on IPv4") || !strings.HasPrefix(v.Summary, "Failures concentrate on 127.0.0.2") {
		t.Errorf("summary blames the IPv4 family, though 127.0.0.1 (0 of 200) is IPv4 too:\n%s", v.Summary)
	}
}

func TestJudgeSpread(t *testing.T) {
	eps := []VtEndpoint{{Addr: "127.0.0.1", Failed: 10, N: 200}, {Addr: "127.0.0.2", Failed: 10, N: 200}, {Addr: "::1", Failed: 10, N: 200}}
	v := Judge(VtReport(eps...), Once())
	if v.Status != report.VerdictSpread || len(v.Suspects) != 0 || v.Suspects == nil {
		t.Errorf("verdict %s, suspects %#v; want spread with an empty (non-nil) list", v.Status, v.Suspects)
	}
	if !strings.HasPrefix(v.Summary, "Failures are spread: 30 of 600 requests failed (5%") {
		t.Errorf("summary %q; want it to start \"Failures are spread: 30 of 600 requests failed (5%%\"", v.Summary)
	}
	if len(v.Tests) != 5 {
		t.Errorf("%d tests; want 2 families + 3 endpoints", len(v.Tests))
	}
	one := Judge(VtReport(VtEndpoint{Addr: "::1", Failed: 3, N: 10}), Once())
	if one.Status != report.VerdictSpread || !strings.Contains(one.Summary, "the only endpoint probed, ::1") {
		t.Errorf("one endpoint: verdict %s %q; want spread, saying only one endpoint was probed", one.Status, one.Summary)
	}
}

func TestJudgeNoData(t *testing.T) {
	for _, r := range []*report.Report{VtReport(), VtReport(VtEndpoint{Addr: "::1"}, VtEndpoint{Addr: "127.0.0.1"})} {
		v := Judge(r, Once())
		if v.Status != report.VerdictNoData || v.Suspects == nil || len(v.Suspects) != 0 || v.Summary == "" {
			t.Errorf("%d endpoints without requests: verdict %+v; want no-data, no suspect, a summary", len(r.Endpoints), v)
		}
	}
}

var vtBound = regexp.MustCompile(`^0 failures in (\d+) requests: below ([0-9.]+)% with 95% confidence\.$`)

// "ok" states the one-sided 95% upper bound, rounded up so it stays true
// (and so never to 0), yet not so far that it says nothing.
func TestJudgeOKStatesTheUpperBound(t *testing.T) {
	v := Judge(VtReport(VtEndpoint{Addr: "127.0.0.1", N: 300}, VtEndpoint{Addr: "::1", N: 300}), Once())
	if want := "0 failures in 600 requests: below 0.5% with 95% confidence."; v.Status != report.VerdictOK || v.Summary != want || len(v.Suspects) != 0 {
		t.Errorf("verdict %s %q; want ok %q", v.Status, v.Summary, want)
	}
	for _, n := range []int64{1, 2, 3, 10, 59, 60, 100, 299, 600, 1000, 12345, 1e5, 1e6, 3e6, 5e6, 1e7, 1e8, 1e9} {
		v := Judge(VtReport(VtEndpoint{Addr: "127.0.0.1", N: n}), Once())
		m := vtBound.FindStringSubmatch(v.Summary)
		if v.Status != report.VerdictOK || m == nil || m[1] != strconv.FormatInt(n, 10) {
			t.Errorf("n=%d: verdict %s %q; want ok, \"0 failures in %d requests: below X%% with 95%% confidence.\"", n, v.Status, v.Summary, n)
			continue
		}
		pct, _ := strconv.ParseFloat(m[2], 64)
		bound := stat.UpperBoundZero(n) * 100
		if digits := strings.Trim(strings.ReplaceAll(m[2], ".", ""), "0"); len(digits) > 2 {
			t.Errorf("n=%d: %q states %s%%; want at most two significant digits, as in \"below 0.5%%\"", n, v.Summary, m[2])
		}
		if !(pct >= bound) || pct > bound*2 {
			t.Errorf("n=%d: %q states %v%%; the 95%% upper bound is %.3g%%: want it rounded up, to at most twice that", n, v.Summary, pct, bound)
		}
	}
}

// Two targets on one failing address: the suspects come in the same order
// every time, or reports (and golden files) differ from run to run.
func TestJudgeSuspectOrderIsStable(t *testing.T) {
	eps := []VtEndpoint{
		{Addr: "192.0.2.1", N: 100, target: "https://a.example.com/"},
		{Addr: "192.0.2.2", Failed: 100, N: 100, target: "https://a.example.com/"},
		{Addr: "192.0.2.1", N: 100, target: "https://b.example.com/"},
		{Addr: "192.0.2.2", Failed: 100, N: 100, target: "https://b.example.com/"},
	}
	var first []string
	for i := range 50 {
		v := Judge(VtReport(eps...), Once())
		var got []string
		for _, s := range v.Suspects {
			got = append(got, s.Address+" "+s.Target)
		}
		if i == 0 {
			first = got
			if len(got) != 2 {
				t.Fatalf("suspects %v; want 192.0.2.2 for both targets", got)
			}
			continue
		}
		if !slices.Equal(got, first) {
			t.Fatalf("run %d: suspects in order %v; run 0 gave %v", i, got, first)
		}
	}
}

// vtOn places the same counts on several addresses for one target.
func vtOn(target string, failed, n int64, addrs ...string) []VtEndpoint {
	var out []VtEndpoint
	for _, a := range addrs {
		out = append(out, VtEndpoint{Addr: a, Failed: failed, N: n, target: target})
	}
	return out
}

func vtTest(v report.Verdict, scope string) (report.Test, bool) {
	for _, t := range v.Tests {
		if t.Scope == scope {
			return t, true
		}
	}
	return report.Test{}, false
}

const vtOK, vtBad = "http://h.test/ok", "http://h.test/bad"

// Two URLs on the same three addresses, /bad failing on every one of them
// and /ok on none: the URL fails, not the addresses.
func TestJudgeFailingURLIsNotItsAddresses(t *testing.T) {
	eps := append(vtOn(vtOK, 0, 20, "127.0.0.1", "127.0.0.2", "::1"), vtOn(vtBad, 20, 20, "127.0.0.1", "127.0.0.2", "::1")...)
	v := Judge(VtReport(eps...), Once())
	if v.Status != report.VerdictSpread || len(v.Suspects) != 0 {
		t.Fatalf("verdict %s, suspects %v; want spread, no suspect\nsummary: %s", v.Status, VtSuspects(v), v.Summary)
	}
	want := "Failures follow the URL, not an address: http://h.test/bad failed 60 of 60 on every address (100%, 95% CI 94–100%) against 0 of 60 for the other URLs (0%, 0–6.0%), p<1e-9."
	if v.Summary != want {
		t.Errorf("summary\n%s\nwant\n%s", v.Summary, want)
	}
	// 2 families + 2 targets + 3 endpoints in each target.
	if len(v.Tests) != 10 {
		t.Errorf("%d tests; want 10 (2 families, 2 targets, 6 endpoints)", len(v.Tests))
	}
	bad, ok := vtTest(v, "target "+vtBad)
	if !ok || !bad.Significant || bad.Failed != 60 || bad.Requests != 60 || bad.RestFailed != 0 || bad.RestTotal != 60 {
		t.Errorf("target test of %s: %+v (found %v); want 60 of 60 against 0 of 60, significant", vtBad, bad, ok)
	}
	if good, ok := vtTest(v, "target "+vtOK); !ok || good.Significant {
		t.Errorf("target test of %s: %+v (found %v); want present, not significant", vtOK, good, ok)
	}
	for _, tt := range v.Tests {
		if strings.HasPrefix(tt.Scope, "endpoint ") {
			// Each endpoint is compared with the two others of its own URL.
			if tt.Significant || tt.RestTotal != 40 {
				t.Errorf("test %+v; want an endpoint compared with the 40 requests of its URL's other endpoints, not significant", tt)
			}
		}
		if strings.HasPrefix(tt.Scope, "family ") && tt.Significant {
			t.Errorf("test %+v: both families fail /bad alike", tt)
		}
	}
}

// A failing URL, and on the healthy URL one bad address: that address is
// the suspect (judged against its own URL's endpoints), and the summary
// still says the other URL fails everywhere.
func TestJudgeFailingURLAndOneBadAddress(t *testing.T) {
	eps := []VtEndpoint{
		{Addr: "127.0.0.1", N: 100, target: vtOK},
		{Addr: "127.0.0.2", Failed: 40, N: 100, target: vtOK},
		{Addr: "::1", N: 100, target: vtOK},
	}
	eps = append(eps, vtOn(vtBad, 100, 100, "127.0.0.1", "127.0.0.2", "::1")...)
	v := Judge(VtReport(eps...), Once())
	if v.Status != report.VerdictConcentrated || len(v.Suspects) != 1 || v.Suspects[0].Address != "127.0.0.2" || v.Suspects[0].Target != vtOK {
		t.Fatalf("verdict %s, suspects %+v; want concentrated on 127.0.0.2 for %s\nsummary: %s", v.Status, v.Suspects, vtOK, v.Summary)
	}
	for _, part := range []string{
		"Failures concentrate on 127.0.0.2 (/ok): 40 of 100 requests failed (40%",
		"against 0 of 200 on the other endpoints of " + vtOK,
		"Failures also follow the URL, not an address: " + vtBad + " failed 300 of 300 on every address",
		"against 40 of 300 for the other URLs",
	} {
		if !strings.Contains(v.Summary, part) {
			t.Errorf("summary lacks %q:\n%s", part, v.Summary)
		}
	}
}

// A URL failing on some of its addresses only, one of them plainly worse:
// that endpoint is the suspect, not the URL.
func TestJudgeURLFailingOnOneAddressNamesTheAddress(t *testing.T) {
	eps := append(vtOn(vtOK, 0, 100, "127.0.0.1", "127.0.0.2", "::1"),
		VtEndpoint{Addr: "127.0.0.1", N: 100, target: vtBad},
		VtEndpoint{Addr: "127.0.0.2", N: 100, target: vtBad},
		VtEndpoint{Addr: "::1", Failed: 100, N: 100, target: vtBad})
	v := Judge(VtReport(eps...), Once())
	if v.Status != report.VerdictConcentrated || len(v.Suspects) != 1 || v.Suspects[0].Address != "::1" || v.Suspects[0].Target != vtBad {
		t.Fatalf("verdict %s, suspects %+v; want concentrated on ::1 for %s\nsummary: %s", v.Status, v.Suspects, vtBad, v.Summary)
	}
	if strings.Contains(v.Summary, "follow the URL") || strings.Contains(v.Summary, "IPv6") {
		t.Errorf("summary blames the URL or the family, though /bad is fine on IPv4 and /ok on ::1:\n%s", v.Summary)
	}
}

// An endpoint alone in its target is compared with nothing: no endpoint
// test for it, and a failing URL on one address says so.
func TestJudgeEndpointAloneInItsTarget(t *testing.T) {
	v := Judge(VtReport(
		VtEndpoint{Addr: "127.0.0.1", Failed: 100, N: 100, target: vtBad},
		VtEndpoint{Addr: "127.0.0.1", N: 100, target: vtOK},
		VtEndpoint{Addr: "::1", N: 100, target: vtOK},
	), Once())
	if _, ok := vtTest(v, "endpoint 127.0.0.1 ("+vtBad+")"); ok || len(v.Tests) != 6 {
		t.Errorf("tests %+v; want 2 families, 2 targets and the 2 endpoints of %s only", v.Tests, vtOK)
	}
	if v.Status != report.VerdictSpread || len(v.Suspects) != 0 ||
		!strings.HasPrefix(v.Summary, "Failures follow the URL: "+vtBad+" failed 100 of 100 on its only address 127.0.0.1 (100%") {
		t.Errorf("verdict %s, suspects %v, summary:\n%s\nwant spread, no suspect, the URL on its only address", v.Status, VtSuspects(v), v.Summary)
	}
}

// With one target nothing changes: no target test, each endpoint against
// every other request.
func TestJudgeOneTargetHasNoTargetTest(t *testing.T) {
	v := Judge(VtReport(VtEndpoint{Addr: "127.0.0.1", Failed: 3, N: 100}, VtEndpoint{Addr: "127.0.0.2", Failed: 4, N: 100}, VtEndpoint{Addr: "::1", Failed: 5, N: 100}), Once())
	for _, tt := range v.Tests {
		if strings.HasPrefix(tt.Scope, "target ") {
			t.Errorf("test %q with a single target", tt.Scope)
		}
		if strings.HasPrefix(tt.Scope, "endpoint ") && tt.Requests+tt.RestTotal != 300 {
			t.Errorf("test %+v: want the endpoint against all other requests", tt)
		}
	}
}

// With few requests all failures may sit in one place and still not be
// significant: say where they are and that the run was too short.
func TestJudgeTooFewRequestsSaysWhere(t *testing.T) {
	cases := []struct {
		name string
		eps  []VtEndpoint
		want string
	}{
		{"one address (the demo, -n 7)",
			[]VtEndpoint{{Addr: "127.0.0.1", N: 3}, {Addr: "127.0.0.2", N: 2}, {Addr: "::1", Failed: 2, N: 2}},
			"2 of 7 requests failed, all on ::1, but too few requests to attribute them (p=0.048, needs p<0.00012): run longer."},
		{"one family",
			[]VtEndpoint{{Addr: "2001:db8::1", Failed: 1, N: 3}, {Addr: "2001:db8::2", Failed: 1, N: 3}, {Addr: "192.0.2.1", N: 3}},
			"2 of 9 requests failed, all on IPv6 (2001:db8::1, 2001:db8::2), but too few requests to attribute them (p=0.42, needs p<0.00012): run longer."},
		{"one URL",
			append(vtOn(vtBad, 1, 3, "192.0.2.1", "192.0.2.2"), vtOn(vtOK, 0, 3, "192.0.2.1", "192.0.2.2")...),
			"2 of 12 requests failed, all on " + vtBad + ", but too few requests to attribute them (p=0.23, needs p<0.00016): run longer."},
		{"a single failure",
			[]VtEndpoint{{Addr: "127.0.0.1", Failed: 1, N: 300}, {Addr: "127.0.0.2", N: 300}},
			"1 of 600 requests failed, on 127.0.0.1, but a single failure cannot be attributed (p=0.5, needs p<0.0005): run longer."},
	}
	for _, c := range cases {
		v := Judge(VtReport(c.eps...), Once())
		if v.Status != report.VerdictSpread || len(v.Suspects) != 0 || v.Summary != c.want {
			t.Errorf("%s: verdict %s, suspects %v, summary\n%s\nwant spread, no suspect,\n%s", c.name, v.Status, VtSuspects(v), v.Summary, c.want)
		}
	}
	// Failures really on several addresses keep saying so.
	v := Judge(VtReport(VtEndpoint{Addr: "127.0.0.1", Failed: 1, N: 3}, VtEndpoint{Addr: "::1", Failed: 1, N: 3}), Once())
	if !strings.HasPrefix(v.Summary, "Failures are spread: 2 of 6 requests failed") {
		t.Errorf("summary %q; want \"Failures are spread: 2 of 6 requests failed …\"", v.Summary)
	}
}

// A URL failing on every address, the other URL on none, is named: the
// verdict is not concentrated on an address.
func TestJudgeReviewFailingURLIsNamed(t *testing.T) {
	eps := append(vtOn(vtOK, 0, 100, "127.0.0.1", "127.0.0.2", "::1"), vtOn(vtBad, 100, 100, "127.0.0.1", "127.0.0.2", "::1")...)
	v := Judge(VtReport(eps...), Once())
	if v.Status == report.VerdictConcentrated || !strings.Contains(v.Summary, vtBad) {
		t.Errorf("verdict %s: %q; every address fails /bad and serves /ok alike: want spread, naming %s", v.Status, v.Summary, vtBad)
	}
}

func TestAlphaValue(t *testing.T) {
	for a, want := range map[float64]string{0.001: "0.001", 0.0002: "0.0002", 0.001 / 6: "0.00016", 0.001 / 3: "0.00033", 0.0005: "0.0005"} {
		if got := words.AlphaValue(a); got != want {
			t.Errorf("alphaValue(%g) = %q; want %q", a, got, want)
		}
	}
}

func TestFailureKinds(t *testing.T) {
	fail, _ := report.ParseFailStatus("5xx")
	tests := []struct {
		status, errors map[string]int64
		want           string
	}{
		{map[string]int64{"200": 9, "503": 3}, nil, "answers 503"},
		{map[string]int64{"502": 3, "504": 5, "404": 9}, nil, "answers 504 and 502"},
		{nil, map[string]int64{"reset": 2, "connect_refused": 7}, "refuses connections and resets connections"},
		{map[string]int64{"502": 20}, map[string]int64{"eof": 20}, "answers 502 and closes connections without an answer"},
		{map[string]int64{"500": 1, "501": 1, "502": 1, "503": 1}, map[string]int64{"timeout": 9}, "does not answer in time and answers 500, 501, 502 and more"},
		{map[string]int64{"200": 4}, nil, ""},
	}
	for _, tt := range tests {
		if got := failureKinds(&report.Stats{Status: tt.status, Errors: tt.errors}, fail); got != tt.want {
			t.Errorf("failureKinds(%v, %v) = %q; want %q", tt.status, tt.errors, got, tt.want)
		}
	}
}

// TestJudgeSaysWhatWasNotTested: a host without an AAAA record, or a run
// limited to one family, says beside the verdict that the other family was
// not tested.
func TestJudgeSaysWhatWasNotTested(t *testing.T) {
	// signed is the report of eps on the host sign.example.com.
	signed := func(eps ...VtEndpoint) *report.Report {
		r := VtReport(eps...)
		for i := range r.Endpoints {
			r.Endpoints[i].Host = "sign.example.com"
		}
		return r
	}
	r := signed(VtEndpoint{Addr: "127.0.0.1", N: 40}, VtEndpoint{Addr: "127.0.0.2", N: 40})
	if v := Judge(r, Once()); !slices.Equal(v.Notes, []string{"No IPv6 address (AAAA record) for sign.example.com: IPv6 not tested."}) {
		t.Errorf("notes %q; want IPv6 not tested for sign.example.com", v.Notes)
	}
	// What the note says follows where the addresses came from (the
	// report's dns entries): --resolve makes no lookup, so no AAAA record
	// is missing; an address in the URL is of one family by itself.
	for _, tt := range []struct {
		sources []string
		want    []string
	}{
		{[]string{"system"}, []string{"No IPv6 address (AAAA record) for sign.example.com: IPv6 not tested."}},
		{[]string{"dns 127.0.0.1:53"}, []string{"No IPv6 address (AAAA record) for sign.example.com: IPv6 not tested."}},
		{[]string{"resolve"}, []string{"IPv6 not tested for sign.example.com: --resolve gave only IPv4 addresses, and no DNS lookup was made."}},
		{[]string{"demo"}, []string{"IPv6 not tested for sign.example.com: the demo has no IPv6 address on this machine."}},
		{[]string{"literal"}, []string{}},
		{[]string{"resolve", "system"}, []string{"No IPv6 address for sign.example.com, neither from DNS (AAAA record) nor from --resolve: IPv6 not tested."}},
	} {
		rr := signed(VtEndpoint{Addr: "127.0.0.1", N: 40}, VtEndpoint{Addr: "127.0.0.2", N: 40})
		for _, src := range tt.sources {
			rr.DNS = append(rr.DNS, report.DNS{Host: "sign.example.com", Port: 443, Source: src, Addresses: []string{"127.0.0.1", "127.0.0.2"}})
		}
		if v := Judge(rr, Once()); !slices.Equal(v.Notes, tt.want) {
			t.Errorf("addresses from %v: notes %q; want %q", tt.sources, v.Notes, tt.want)
		}
	}
	r.Plan.Only = "ipv4"
	if v := Judge(r, Once()); !slices.Equal(v.Notes, []string{"IPv6 not tested (-4)."}) {
		t.Errorf("with -4: notes %q; want IPv6 not tested (-4)", v.Notes)
	}
	both := signed(VtEndpoint{Addr: "127.0.0.1", N: 40}, VtEndpoint{Addr: "::1", N: 40})
	if v := Judge(both, Once()); len(v.Notes) != 0 || v.Notes == nil {
		t.Errorf("both families probed: notes %#v; want an empty list", v.Notes)
	}
}

// TestJudgeSaysWhenFewConnections: an OK or a culprit from a run whose
// requests rode one or two connections per address holds only for the
// instances those connections reached; the verdict says so and names the
// fix, and says nothing when connections were sampled.
func TestJudgeSaysWhenFewConnections(t *testing.T) {
	fewNote := func(v report.Verdict) string { return noteWith(v, "Few connections") }
	withConns := func(r *report.Report, conns ...int64) *report.Report {
		for i := range r.Endpoints {
			e := &r.Endpoints[i]
			e.Conns = &report.Conns{Connections: conns[i], Requests: e.Requests, Failed: e.Failed}
		}
		return r
	}
	// --conn-requests 0: one connection per address, a healthy-looking run.
	r := withConns(VtReport(VtEndpoint{Addr: "127.0.0.1", N: 50}, VtEndpoint{Addr: "127.0.0.2", N: 50},
		VtEndpoint{Addr: "::1", N: 50, Failed: 50}), 1, 1, 1)
	r.Plan.ConnRequests = 0
	v := Judge(r, Once())
	want := "Few connections: 127.0.0.1, 127.0.0.2 and ::1 sent 50 requests over 1 connection each."
	if n := fewNote(v); !strings.HasPrefix(n, want) || !strings.Contains(n, "--conn-requests 0 kept each connection") {
		t.Errorf("one connection each: note %q; want it to start %q and name --conn-requests 0", n, want)
	}
	if v.Status != report.VerdictConcentrated || !slices.Equal(VtSuspects(v), []string{"::1"}) {
		t.Errorf("the note changed the verdict: %s %v", v.Status, VtSuspects(v))
	}
	// OK verdicts get the note too: that is where it matters most.
	ok := withConns(VtReport(VtEndpoint{Addr: "127.0.0.1", N: 40}, VtEndpoint{Addr: "127.0.0.2", N: 40}), 2, 12)
	ok.Plan.ConnRequests = 4
	v = Judge(ok, Once())
	if n := fewNote(v); v.Status != report.VerdictOK || !strings.HasPrefix(n, "Few connections: 127.0.0.1 sent 40 requests over 2 connections.") ||
		!strings.Contains(n, "lower --conn-requests") {
		t.Errorf("OK with 2 connections on 127.0.0.1: %s, note %q", v.Status, n)
	}
	// Sampled connections, or one request per connection: no note.
	for _, c := range [][]int64{{12, 12}, {40, 40}} {
		r := withConns(VtReport(VtEndpoint{Addr: "127.0.0.1", N: 40}, VtEndpoint{Addr: "127.0.0.2", N: 40}), c...)
		if n := fewNote(Judge(r, Once())); n != "" {
			t.Errorf("connections %v: unexpected note %q", c, n)
		}
	}
	short := withConns(VtReport(VtEndpoint{Addr: "127.0.0.1", N: 3}), 3)
	if n := fewNote(Judge(short, Once())); n != "" {
		t.Errorf("3 requests on 3 connections: unexpected note %q", n)
	}
}

// TestDroppedNoteNamesBothLimits: drops are explained by the -c cap, and
// past probe.BusyWorkers also by the machine's CPU, which holds back
// growth while the client is itself short of it.
func TestDroppedNoteNamesBothLimits(t *testing.T) {
	for _, tt := range []struct {
		c       int
		wantCPU bool
	}{{10, false}, {1000, true}} {
		r := VtReport(VtEndpoint{Addr: "127.0.0.1", N: 40}, VtEndpoint{Addr: "127.0.0.2", N: 40})
		r.Endpoints[1].Dropped, r.Totals.Dropped = 7, 7
		r.Plan.Concurrency, r.Plan.BusyWorkers = tt.c, 64
		note := noteWith(Judge(r, Once()), "7 requests fell due but were not sent")
		if !strings.Contains(note, "127.0.0.2 ×7") || !strings.Contains(note, fmt.Sprintf("up to -c (%d)", tt.c)) {
			t.Errorf("-c %d: note %q; want 127.0.0.2 ×7 and the -c cap", tt.c, note)
		}
		if got := strings.Contains(note, "CPU to spare"); got != tt.wantCPU {
			t.Errorf("-c %d: note %q names the CPU: %v; want %v", tt.c, note, got, tt.wantCPU)
		}
	}
}

// TestJudgeNoLatencyBlameWhenTheClientStruggled: one address much slower
// than the other is named, unless the machine could not send many of its
// requests (out of descriptors): then the client slowed itself and latency
// is not compared.
func TestJudgeNoLatencyBlameWhenTheClientStruggled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	build := func(clientErrors int64) *report.Report {
		r := VtReport(VtEndpoint{Addr: "127.0.0.1", N: 200}, VtEndpoint{Addr: "127.0.0.2", N: 200})
		for i, base := range []float64{500, 20_000} { // µs: the second 40× slower
			h := report.NewHist()
			for range 200 {
				_ = h.RecordValue(int64(base * (1 + rng.Float64())))
			}
			r.Endpoints[i].HDR = encodeHist(t, h)
		}
		r.Totals.ClientErrors = clientErrors
		return r
	}
	if v := Judge(build(0), Once()); len(v.Slow) != 1 || !hasNote(v, "127.0.0.2 is slow against") {
		t.Errorf("no client errors: slow %v, notes %q; want 127.0.0.2 named slow", v.Slow, v.Notes)
	}
	if v := Judge(build(30), Once()); len(v.Slow) != 1 {
		t.Errorf("30 client errors for 400 requests: slow %v; want 127.0.0.2 still named", v.Slow)
	}
	if v := Judge(build(4000), Once()); len(v.Slow) != 0 || hasNote(v, "is slow against") || !hasNote(v, "Latency is not compared") {
		t.Errorf("4000 client errors: slow %v, notes %q; want no latency finding, and why", v.Slow, v.Notes)
	}
}

// TestFewConnsNoteStaysShort: many addresses with different loads are
// named together, not one clause each.
func TestFewConnsNoteStaysShort(t *testing.T) {
	var eps []VtEndpoint
	for i := 1; i <= 12; i++ {
		eps = append(eps, VtEndpoint{Addr: fmt.Sprintf("127.0.0.%d", i), N: int64(10 + i)})
	}
	r := VtReport(eps...)
	for i := range r.Endpoints {
		r.Endpoints[i].Conns = &report.Conns{Connections: 1, Requests: r.Endpoints[i].Requests}
	}
	r.Plan.ConnRequests = 100
	note := noteWith(Judge(r, Once()), "Few connections")
	want := "Few connections: 127.0.0.1, 127.0.0.2, 127.0.0.3, 127.0.0.4, 127.0.0.5, 127.0.0.6, 127.0.0.7 and 5 more sent their requests over fewer than 11 connections each."
	if !strings.HasPrefix(note, want) {
		t.Errorf("note %q; want it to start %q", note, want)
	}
}
