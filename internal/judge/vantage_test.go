package judge

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
)

// vantageStart is when the built merges' timelines start.
var vantageStart = time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)

// vrun is one run of a built merge: from its vantage, sending from second
// from to second to of the merge's timeline (1s buckets), perSec requests
// a second to each address, failed(sec, address) of them failing.
type vrun struct {
	vantage  string
	from, to int
	perSec   int64
	failed   func(sec, addr int) int64
}

// builtMerge is the counts of a merged report of runs over four addresses
// of one URL, broken down by vantage with each vantage's timelines, as
// merge.Merge keeps them.
func builtMerge(runs ...vrun) *report.Report {
	r := &report.Report{Families: report.FamilyStats{"ipv4": {}}}
	addrs := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}
	buckets := 0
	for _, run := range runs {
		buckets = max(buckets, run.to)
	}
	r.Timeline = report.Timeline{IntervalS: 1, Start: report.Time{Time: vantageStart}}
	for _, a := range addrs {
		r.Endpoints = append(r.Endpoints, report.Endpoint{Target: "https://sign.example.com/", Host: "sign.example.com", Address: a, Port: 443, Family: "ipv4"})
		r.Timeline.Series = append(r.Timeline.Series, report.Series{Address: a, Target: "https://sign.example.com/", Requests: make([]int64, buckets), Failed: make([]int64, buckets)})
	}
	at := map[string]int{}
	for _, run := range runs {
		vi, ok := at[run.vantage]
		if !ok {
			vi = len(r.Vantages)
			at[run.vantage] = vi
			vs := report.VantageStats{Name: run.vantage, Families: map[string]report.ConnStats{}}
			for _, a := range addrs {
				vs.Endpoints = append(vs.Endpoints, report.VantageEndpoint{Target: "https://sign.example.com/", Address: a, Family: "ipv4",
					Timeline: &report.VantageSeries{Requests: make([]int64, buckets), Failed: make([]int64, buckets)}})
			}
			r.Vantages = append(r.Vantages, vs)
		}
		vs := &r.Vantages[vi]
		vs.Runs++
		r.Inputs = append(r.Inputs, report.Input{Vantage: run.vantage, StartedAt: report.Time{Time: vantageStart.Add(time.Duration(run.from) * time.Second)},
			EndedAt: report.Time{Time: vantageStart.Add(time.Duration(run.to) * time.Second)}, SendS: float64(run.to - run.from)})
		for sec := run.from; sec < run.to; sec++ {
			for ai := range addrs {
				f := run.failed(sec, ai)
				ve := &vs.Endpoints[ai]
				ve.Requests += run.perSec
				ve.Failed += f
				ve.Timeline.Requests[sec] += run.perSec
				ve.Timeline.Failed[sec] += f
				e := &r.Endpoints[ai]
				e.Requests += run.perSec
				e.Failed += f
				r.Timeline.Series[ai].Requests[sec] += run.perSec
				r.Timeline.Series[ai].Failed[sec] += f
				vs.Requests += run.perSec
				vs.Failed += f
				r.Totals.Requests += run.perSec
				r.Totals.Failed += f
			}
		}
	}
	return r
}

// vantageMerge builds the counts of a merged report of one run per
// vantage over four addresses of one URL, all at the same time, in which
// each endpoint fails with probability p(vantage, address) from each
// vantage.
func vantageMerge(rng *rand.Rand, vantages, n int, p func(v, a int) float64) *report.Report {
	var runs []vrun
	for v := range vantages {
		runs = append(runs, vrun{vantage: "zone-" + strconv.Itoa(v), from: 0, to: 10, perSec: int64(n / 10), failed: func(_, a int) int64 {
			return binomial(rng, int64(n/10), p(v, a))
		}})
	}
	return builtMerge(runs...)
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

// TestVantagesAtDifferentTimes: the runs of two vantages that did not
// overlap, the first while an address failed and the second after it
// recovered, blame no vantage; a note says why. Had they overlapped, the
// same difference would be blamed.
func TestVantagesAtDifferentTimes(t *testing.T) {
	failing := func(sec, a int) int64 {
		if a == 0 {
			return 5
		}
		return 0
	}
	healthy := func(int, int) int64 { return 0 }
	for _, tt := range []struct {
		name   string
		runs   []vrun
		blamed bool
		tests  int
		note   string
	}{
		{"one after the other", []vrun{{"eu-west", 0, 30, 10, failing}, {"us-east", 30, 60, 10, healthy}}, false, 0,
			"No vantage is blamed: the vantages probed at different times (eu-west 20:43:00.000–20:43:30.000 UTC; us-east 20:43:30.000–20:44:00.000 UTC) and share none of it, so none is compared with another."},
		{"an hour apart", []vrun{{"eu-west", 0, 30, 10, failing}, {"us-east", 3600, 3630, 10, healthy}}, false, 0,
			"the vantages probed at different times"},
		{"one second in common, 2 requests a second", []vrun{{"eu-west", 0, 30, 2, func(int, int) int64 { return 0 }}, {"us-east", 29, 59, 2, healthy}}, false, 8,
			"No vantage is blamed: the vantages probed at the same time too briefly to tell them apart: eu-west shares only 1.0s with the others (20:43:29.000–20:43:30.000 UTC), too few requests then for any difference to be significant"},
		{"at the same time", []vrun{{"eu-west", 0, 30, 10, failing}, {"us-east", 0, 30, 10, healthy}}, true, 8, ""},
		{"half of it at the same time", []vrun{{"eu-west", 0, 30, 10, failing}, {"us-east", 15, 45, 10, healthy}}, true, 8,
			"The vantages are compared only over the time they share: eu-west over 15.0s of its 30.0s (20:43:15.000–20:43:30.000 UTC), us-east over 15.0s of its 30.0s (20:43:15.000–20:43:30.000 UTC); their other requests are left out of those tests."},
		// The address failed only in eu-west's first 15 seconds, before
		// us-east began: over the time they share, both see it answer.
		{"failed only before the other began", []vrun{{"eu-west", 0, 30, 10, func(sec, a int) int64 {
			if sec < 15 {
				return failing(sec, a)
			}
			return 0
		}}, {"us-east", 15, 45, 10, healthy}}, false, 8, "compared only over the time they share"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := builtMerge(tt.runs...)
			vd := Judge(r, Once())
			tests := 0
			for _, x := range vd.Tests {
				if x.Kind == report.TestVantage {
					tests++
				}
			}
			if blamed := len(vd.Vantages) > 0; blamed != tt.blamed || tests != tt.tests {
				t.Errorf("%d vantage tests, findings %+v; want %d tests, a vantage blamed: %v\n%s", tests, vd.Vantages, tt.tests, tt.blamed, vd.Summary)
			}
			if tt.blamed {
				if v := vd.Vantages[0]; v.Vantage != "eu-west" || v.Address != "192.0.2.1" || !strings.Contains(vd.Headline, "only eu-west sees 192.0.2.1 fail") {
					t.Errorf("finding %+v, headline %q; want eu-west's 192.0.2.1", v, vd.Headline)
				}
			} else if strings.Contains(vd.Headline+vd.Summary, "sees") || strings.Contains(vd.Summary, "routing") {
				t.Errorf("a vantage is blamed: headline %q, summary %q", vd.Headline, vd.Summary)
			}
			notes := strings.Join(vd.Notes, "\n")
			if tt.note == "" && strings.Contains(notes, "ompared only over") || !strings.Contains(notes, tt.note) {
				t.Errorf("notes:\n%s\nwant %q", notes, tt.note)
			}
		})
	}
}

// TestVantagesTimesUnknown: a merge that kept no timeline of each vantage
// (merged by an older pinprobe) compares no vantage, and says why.
func TestVantagesTimesUnknown(t *testing.T) {
	r := builtMerge(vrun{"eu-west", 0, 30, 10, func(_, a int) int64 { return int64(5 * (1 - min(a, 1))) }},
		vrun{"us-east", 0, 30, 10, func(int, int) int64 { return 0 }})
	for vi := range r.Vantages {
		for x := range r.Vantages[vi].Endpoints {
			r.Vantages[vi].Endpoints[x].Timeline = nil
		}
	}
	vd := Judge(r, Once())
	if len(vd.Vantages) != 0 {
		t.Errorf("findings %+v; want none", vd.Vantages)
	}
	want := "The vantages are not compared with each other, and none is blamed: the report keeps no timeline of each vantage's requests"
	if !hasNote(vd, want) {
		t.Errorf("notes %q; want %q", vd.Notes, want)
	}
}

// TestVantagesThreeTimes: of three vantages, two probe at the same time
// and are compared, one of them blamed; the third came later, is compared
// with neither, and a note names it; a run shorter than a bucket, at the
// same moment as another, is compared with it.
func TestVantagesThreeTimes(t *testing.T) {
	failing := func(_, a int) int64 { return int64(5 * (1 - min(a, 1))) }
	healthy := func(int, int) int64 { return 0 }
	r := builtMerge(vrun{"eu-west", 0, 30, 10, failing}, vrun{"us-east", 0, 30, 10, healthy}, vrun{"ap-south", 40, 70, 10, healthy})
	vd := Judge(r, Once())
	if len(vd.Vantages) != 1 || vd.Vantages[0].Vantage != "eu-west" || vd.Vantages[0].RestTotal != 300 {
		t.Errorf("findings %+v; want eu-west's, against us-east's 300 requests only", vd.Vantages)
	}
	want := "Not compared with the other vantages, and not blamed: ap-south shares no time with the others (it probed 20:43:40.000–20:44:10.000 UTC)."
	if !hasNote(vd, want) {
		t.Errorf("notes %q; want %q", vd.Notes, want)
	}

	// Two runs of 0.4s, 0.1s apart, in one bucket of 1s.
	r = builtMerge(vrun{"eu-west", 0, 1, 100, func(_, a int) int64 { return int64(50 * (1 - min(a, 1))) }}, vrun{"us-east", 0, 1, 100, healthy})
	r.Inputs[0].SendS, r.Inputs[1].SendS = 0.4, 0.4
	r.Inputs[1].StartedAt.Time = r.Inputs[1].StartedAt.Add(100 * time.Millisecond)
	vd = Judge(r, Once())
	if len(vd.Vantages) != 1 || vd.Vantages[0].Vantage != "eu-west" {
		t.Errorf("runs within one bucket: findings %+v, notes %q; want eu-west's", vd.Vantages, vd.Notes)
	}
}

// TestVantagesSameMoments: vantages are compared moment by moment, not
// pooled over the time they share. 192.0.2.1 fails half its requests in
// the first 10 seconds and none after, from every vantage; eu-west sends
// ten times as much in the first half, us-east in the second. Pooled,
// eu-west sees 45% against us-east's 4.5% (Fisher p<1e-9); at each moment
// both see the same.
func TestVantagesSameMoments(t *testing.T) {
	half := func(sec, a int, per int64) int64 {
		if a == 0 && sec < 10 {
			return per / 2
		}
		return 0
	}
	run := func(v string, from, to int, per int64) vrun {
		return vrun{v, from, to, per, func(sec, a int) int64 { return half(sec, a, per) }}
	}
	r := builtMerge(run("eu-west", 0, 10, 20), run("eu-west", 10, 20, 2), run("us-east", 0, 10, 2), run("us-east", 10, 20, 20))
	vd := Judge(r, Once())
	if len(vd.Vantages) > 0 || strings.Contains(vd.Headline, "sees") {
		t.Errorf("a vantage is blamed for when it sent, not where from: %+v\n%s", vd.Vantages, vd.Summary)
	}
	for _, x := range vd.Tests {
		if x.Kind == report.TestVantage && x.Address == "192.0.2.1" && x.Vantage == "eu-west" {
			if x.P < 0.01 {
				t.Errorf("eu-west's 192.0.2.1: p=%v, want no difference (pooled it is %d of %d against %d of %d)", x.P, x.Failed, x.Requests, x.RestFailed, x.RestTotal)
			}
			return
		}
	}
	t.Errorf("no vantage test of eu-west's 192.0.2.1: %+v", vd.Tests)
}
