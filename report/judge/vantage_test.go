package judge

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/report"
)

// vantageMerge builds the counts of a merged report of one run per
// vantage over four addresses of one URL, in which each endpoint fails with
// probability p(vantage, address) from each vantage.
func vantageMerge(rng *rand.Rand, vantages, n int, p func(v, a int) float64) *report.Report {
	r := &report.Report{Families: report.FamilyStats{"ipv4": {}}}
	addrs := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}
	for _, a := range addrs {
		r.Endpoints = append(r.Endpoints, report.Endpoint{Target: "https://sign.example.com/", Host: "sign.example.com", Address: a, Port: 443, Family: "ipv4"})
	}
	for v := range vantages {
		vs := report.VantageStats{Name: "zone-" + strconv.Itoa(v), Runs: 1, Families: map[string]report.ConnStats{}}
		for ai, a := range addrs {
			var failed int64
			for range n {
				if rng.Float64() < p(v, ai) {
					failed++
				}
			}
			vs.Endpoints = append(vs.Endpoints, report.VantageEndpoint{Target: "https://sign.example.com/", Address: a, Family: "ipv4", Requests: int64(n), Failed: failed})
			e := &r.Endpoints[ai]
			e.Requests += int64(n)
			e.Failed += failed
			r.Totals.Requests += int64(n)
			r.Totals.Failed += failed
		}
		r.Vantages = append(r.Vantages, vs)
		r.Inputs = append(r.Inputs, report.Input{Vantage: vs.Name})
	}
	return r
}

// TestVantageFalseAlarms: over merges in which every vantage sees the same
// failure rates (1%, 5% or 20% on every address), the vantage tests name a
// vantage at most about as often as the verdict's level allows; where one
// vantage sees one address fail 15 points more, they find it.
func TestVantageFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 3))
	const runs = 400
	alarms := 0
	for i := range runs {
		base := []float64{0.01, 0.05, 0.2}[i%3]
		r := vantageMerge(rng, 3, 300, func(v, a int) float64 { return base })
		j := newJudgement(r, Once())
		j.vantages()
		if len(j.vantageFind) > 0 {
			alarms++
		}
		if tests := len(j.tests); tests != 12 {
			t.Fatalf("%d vantage tests; want 12 (4 addresses from 3 vantages)", tests)
		}
	}
	// At α = 0.001 over every test, the chance of any false claim in a
	// merge is at most 0.001: 400 merges expect at most 0.4 of them.
	if alarms > 2 {
		t.Errorf("%d of %d healthy merges name a vantage; want at most 2 (α = %g)", alarms, runs, Alpha)
	}
	found := 0
	for i := range 50 {
		base := []float64{0.01, 0.05}[i%2]
		r := vantageMerge(rng, 3, 300, func(v, a int) float64 {
			if v == 1 && a == 2 {
				return base + 0.15
			}
			return base
		})
		j := newJudgement(r, Once())
		j.vantages()
		for _, f := range j.vantageFind {
			if f.test.Vantage != "zone-1" || f.test.Address != "192.0.2.3" {
				t.Errorf("a vantage finding on %s from %s; only 192.0.2.3 from zone-1 fails more", f.test.Address, f.test.Vantage)
			}
		}
		if len(j.vantageFind) > 0 {
			found++
		}
	}
	if found < 45 {
		t.Errorf("the failing vantage found in %d of 50 merges; want at least 45", found)
	}
	t.Logf("healthy merges naming a vantage: %d of %d; a vantage 15 points worse found in %d of 50", alarms, runs, found)
}

// TestVantageAllAddresses: when every address fails from one vantage and
// none from the others, no address stands out (the verdict is spread), but
// the vantage does: the headline and summary name it with every address.
func TestVantageAllAddresses(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 4))
	r := vantageMerge(rng, 2, 300, func(v, a int) float64 {
		if v == 0 {
			return 0.3
		}
		return 0
	})
	vd := Judge(r, Once())
	if vd.Status != report.VerdictSpread || len(vd.Suspects) != 0 {
		t.Fatalf("status %s, suspects %+v; want spread, none", vd.Status, vd.Suspects)
	}
	if len(vd.Vantages) != 4 {
		t.Errorf("%d vantage findings; want the 4 addresses from zone-0", len(vd.Vantages))
	}
	want := "failures not attributable to one address; only zone-0 sees 192.0.2.1, 192.0.2.2, 192.0.2.3 and 192.0.2.4 fail"
	if vd.Headline != want {
		t.Errorf("headline %q; want %q", vd.Headline, want)
	}
	if !strings.Contains(vd.Summary, "Only the runs from zone-0 see 192.0.2.1, 192.0.2.2, 192.0.2.3 and 192.0.2.4 fail: 192.0.2.1: ") {
		t.Errorf("summary %q", vd.Summary)
	}
}
