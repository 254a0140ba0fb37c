package report

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// vtEndpoint is one endpoint's counts for a constructed report.
type vtEndpoint struct {
	addr      string
	failed, n int64
	target    string // "https://app.example.com/" when empty
}

// vtReport builds a report whose endpoints, families and totals hold the
// given counts, as Aggregator.Close fills them before it calls Judge.
func vtReport(eps ...vtEndpoint) *Report {
	r := &Report{Families: map[string]*Stats{}}
	add := func(s *Stats, failed, n int64) {
		s.Requests += n
		s.Failed += failed
		s.OK += n - failed
		if s.Requests > 0 {
			s.FailureRate = round(float64(s.Failed)/float64(s.Requests), 6)
		}
	}
	for _, e := range eps {
		fam := "ipv4"
		if netip.MustParseAddr(e.addr).Is6() {
			fam = "ipv6"
		}
		target := e.target
		if target == "" {
			target = "https://app.example.com/"
		}
		ep := Endpoint{Address: e.addr, Family: fam, Target: target, Host: "app.example.com", Port: 443}
		add(&ep.Stats, e.failed, e.n)
		r.Endpoints = append(r.Endpoints, ep)
		if r.Families[fam] == nil {
			r.Families[fam] = &Stats{}
		}
		add(r.Families[fam], e.failed, e.n)
		add(&r.Totals, e.failed, e.n)
	}
	return r
}

func vtSuspects(v Verdict) []string {
	out := []string{}
	for _, s := range v.Suspects {
		out = append(out, s.Address)
	}
	return out
}

func vtString(eps []vtEndpoint) string {
	var parts []string
	for _, e := range eps {
		parts = append(parts, fmt.Sprintf("%s %d/%d", e.addr, e.failed, e.n))
	}
	return strings.Join(parts, ", ")
}

// A handful of requests never names a backend, whatever the split.
func TestJudgeHandfulIsNeverConcentrated(t *testing.T) {
	cases := [][]vtEndpoint{
		{{addr: "127.0.0.1", failed: 5, n: 5}, {addr: "127.0.0.2", n: 5}},
		{{addr: "::1", failed: 5, n: 5}, {addr: "127.0.0.1", n: 5}},
		{{addr: "127.0.0.1", n: 5}, {addr: "::1", failed: 5, n: 5}},
		{{addr: "::1", failed: 5, n: 5}, {addr: "127.0.0.1", n: 5}, {addr: "127.0.0.2", n: 5}},
		{{addr: "2001:db8::1", failed: 5, n: 5}, {addr: "2001:db8::2", failed: 5, n: 5}, {addr: "192.0.2.1", n: 5}},
		{{addr: "::1", failed: 3, n: 3}, {addr: "127.0.0.1", n: 3}},
		{{addr: "::1", failed: 1, n: 1}, {addr: "127.0.0.1", n: 1}},
	}
	for _, eps := range cases {
		v := Judge(vtReport(eps...))
		if v.Status != VerdictSpread || len(v.Suspects) != 0 {
			t.Errorf("%s: verdict %s, suspects %v; want spread, no suspect\nsummary: %s", vtString(eps), v.Status, vtSuspects(v), v.Summary)
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
					eps := []vtEndpoint{{addr: bad, failed: n, n: n}}
					for i := range others {
						a := fmt.Sprintf("192.0.2.%d", i+1)
						if otherFam == "v6" || (otherFam == "mixed" && i%2 == 1) {
							a = fmt.Sprintf("2001:db8::%d", i+1)
						}
						eps = append(eps, vtEndpoint{addr: a, n: n})
					}
					v := Judge(vtReport(eps...))
					if v.Status != VerdictConcentrated || !slices.Equal(vtSuspects(v), []string{bad}) {
						t.Errorf("%s: verdict %s, suspects %v; want concentrated on %s\nsummary: %s",
							vtString(eps), v.Status, vtSuspects(v), bad, v.Summary)
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
	cases := map[string][]vtEndpoint{
		"two healthy IPv4": {
			{addr: "192.0.2.1", n: 40}, {addr: "192.0.2.2", n: 40},
			{addr: "2001:db8::1", failed: 40, n: 40}, {addr: "2001:db8::2", failed: 40, n: 40},
			{addr: "2001:db8::3", failed: 40, n: 40}, {addr: "2001:db8::4", failed: 40, n: 40},
		},
		"one healthy IPv4": {
			{addr: "192.0.2.1", n: 40},
			{addr: "2001:db8::4", failed: 40, n: 40}, {addr: "2001:db8::3", failed: 40, n: 40},
			{addr: "2001:db8::2", failed: 40, n: 40}, {addr: "2001:db8::1", failed: 40, n: 40},
		},
		"IPv4 with a stray failure": {
			{addr: "192.0.2.1", failed: 1, n: 200}, {addr: "192.0.2.2", n: 200},
			{addr: "2001:db8::1", failed: 200, n: 200}, {addr: "2001:db8::2", failed: 200, n: 200},
			{addr: "2001:db8::3", failed: 200, n: 200}, {addr: "2001:db8::4", failed: 200, n: 200},
		},
	}
	for name, eps := range cases {
		v := Judge(vtReport(eps...))
		if v.Status != VerdictConcentrated || !slices.Equal(vtSuspects(v), want) {
			t.Errorf("%s: verdict %s, suspects %v; want concentrated on %v\nsummary: %s", name, v.Status, vtSuspects(v), want, v.Summary)
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
	eps := []vtEndpoint{{addr: "127.0.0.1", n: 200}, {addr: "127.0.0.2", failed: 40, n: 200}, {addr: "::1", n: 200}}
	v := Judge(vtReport(eps...))
	if v.Status != VerdictConcentrated || !slices.Equal(vtSuspects(v), []string{"127.0.0.2"}) {
		t.Fatalf("verdict %s, suspects %v; want concentrated on 127.0.0.2\nsummary: %s", v.Status, vtSuspects(v), v.Summary)
	}
	if strings.Contains(v.Summary, "on IPv4") || !strings.HasPrefix(v.Summary, "Failures concentrate on 127.0.0.2") {
		t.Errorf("summary blames the IPv4 family, though 127.0.0.1 (0 of 200) is IPv4 too:\n%s", v.Summary)
	}
}

func TestJudgeSpread(t *testing.T) {
	eps := []vtEndpoint{{addr: "127.0.0.1", failed: 10, n: 200}, {addr: "127.0.0.2", failed: 10, n: 200}, {addr: "::1", failed: 10, n: 200}}
	v := Judge(vtReport(eps...))
	if v.Status != VerdictSpread || len(v.Suspects) != 0 || v.Suspects == nil {
		t.Errorf("verdict %s, suspects %#v; want spread with an empty (non-nil) list", v.Status, v.Suspects)
	}
	if !strings.HasPrefix(v.Summary, "Failures are spread: 30 of 600 requests failed (5%") {
		t.Errorf("summary %q; want it to start \"Failures are spread: 30 of 600 requests failed (5%%\"", v.Summary)
	}
	if len(v.Tests) != 5 {
		t.Errorf("%d tests; want 2 families + 3 endpoints", len(v.Tests))
	}
	one := Judge(vtReport(vtEndpoint{addr: "::1", failed: 3, n: 10}))
	if one.Status != VerdictSpread || !strings.Contains(one.Summary, "the only endpoint probed, ::1") {
		t.Errorf("one endpoint: verdict %s %q; want spread, saying only one endpoint was probed", one.Status, one.Summary)
	}
}

func TestJudgeNoData(t *testing.T) {
	for _, r := range []*Report{vtReport(), vtReport(vtEndpoint{addr: "::1"}, vtEndpoint{addr: "127.0.0.1"})} {
		v := Judge(r)
		if v.Status != VerdictNoData || v.Suspects == nil || len(v.Suspects) != 0 || v.Summary == "" {
			t.Errorf("%d endpoints without requests: verdict %+v; want no-data, no suspect, a summary", len(r.Endpoints), v)
		}
	}
}

var vtBound = regexp.MustCompile(`^0 failures in (\d+) requests: below ([0-9.]+)% with 95% confidence\.$`)

// "ok" states the one-sided 95% upper bound, rounded up so it stays true
// (and so never to 0), yet not so far that it says nothing.
func TestJudgeOKStatesTheUpperBound(t *testing.T) {
	v := Judge(vtReport(vtEndpoint{addr: "127.0.0.1", n: 300}, vtEndpoint{addr: "::1", n: 300}))
	if want := "0 failures in 600 requests: below 0.5% with 95% confidence."; v.Status != VerdictOK || v.Summary != want || len(v.Suspects) != 0 {
		t.Errorf("verdict %s %q; want ok %q", v.Status, v.Summary, want)
	}
	for _, n := range []int64{1, 2, 3, 10, 59, 60, 100, 299, 600, 1000, 12345, 1e5, 1e6, 3e6, 5e6, 1e7, 1e8, 1e9} {
		v := Judge(vtReport(vtEndpoint{addr: "127.0.0.1", n: n}))
		m := vtBound.FindStringSubmatch(v.Summary)
		if v.Status != VerdictOK || m == nil || m[1] != strconv.FormatInt(n, 10) {
			t.Errorf("n=%d: verdict %s %q; want ok, \"0 failures in %d requests: below X%% with 95%% confidence.\"", n, v.Status, v.Summary, n)
			continue
		}
		pct, _ := strconv.ParseFloat(m[2], 64)
		bound := UpperBoundZero(n) * 100
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
	eps := []vtEndpoint{
		{addr: "192.0.2.1", n: 100, target: "https://a.example.com/"},
		{addr: "192.0.2.2", failed: 100, n: 100, target: "https://a.example.com/"},
		{addr: "192.0.2.1", n: 100, target: "https://b.example.com/"},
		{addr: "192.0.2.2", failed: 100, n: 100, target: "https://b.example.com/"},
	}
	var first []string
	for i := range 50 {
		v := Judge(vtReport(eps...))
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
