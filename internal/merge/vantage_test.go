package merge_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestMergeVantages: the breakdown of a merge of merges counts each run
// under its vantage, adds up to the merged endpoints, and the verdict names
// the vantage whose runs alone see an address fail.
func TestMergeVantages(t *testing.T) {
	m := fixture.VantageMerge(t)
	if len(m.Vantages) != 2 {
		t.Fatalf("%d vantages; want 2: %+v", len(m.Vantages), m.Vantages)
	}
	eu, us := m.Vantages[0], m.Vantages[1]
	if eu.Name != "eu-west" || eu.Runs != 1 || eu.Requests != 400 || eu.Failed != 60 ||
		eu.Families["ipv6"] != (report.ConnStats{Requests: 200, Failed: 60}) || eu.Families["ipv4"] != (report.ConnStats{Requests: 200}) {
		t.Errorf("eu-west: %+v", eu)
	}
	if us.Name != "us-east" || us.Runs != 2 || us.Requests != 800 || us.Failed != 0 || len(us.Endpoints) != 2 {
		t.Fatalf("us-east: %+v", us)
	}
	us6 := us.Endpoints[1]
	us6.Timeline = nil
	if us6 != (report.VantageEndpoint{Target: "https://sign.example.com/", Address: "2001:db8::10", Family: "ipv6", Requests: 400}) {
		t.Errorf("us-east's 2001:db8::10: %+v", us6)
	}
	// Each vantage's timeline, through the merge of merges: us-east's two
	// runs side by side, 20 requests a second from the first bucket on;
	// eu-west's 10, 3 of them failing.
	for _, tt := range []struct {
		e           report.VantageEndpoint
		req, failed int64
	}{{us.Endpoints[1], 20, 0}, {eu.Endpoints[1], 10, 3}} {
		tl := tt.e.Timeline
		if tl == nil || tl.First != 0 || len(tl.Requests) != 20 {
			t.Fatalf("%s's timeline: %+v; want 20 buckets from the first", tt.e.Address, tl)
		}
		for k := range tl.Requests {
			if tl.Requests[k] != tt.req || tl.Failed[k] != tt.failed {
				t.Errorf("%s's bucket %d: %d failed of %d; want %d of %d", tt.e.Address, k, tl.Failed[k], tl.Requests[k], tt.failed, tt.req)
			}
		}
	}
	for i, in := range m.Inputs {
		if want := []string{"eu-west", "us-east", "us-east"}[i]; in.Vantage != want {
			t.Errorf("inputs[%d] vantage %q; want %q", i, in.Vantage, want)
		}
	}
	if len(m.Verdict.Vantages) != 1 || m.Verdict.Vantages[0].Address != "2001:db8::10" || m.Verdict.Vantages[0].Vantage != "eu-west" {
		t.Fatalf("verdict vantages %+v", m.Verdict.Vantages)
	}
	want := "Only the runs from eu-west see 2001:db8::10 fail: 60 of 200 failed from there"
	if !strings.Contains(m.Verdict.Summary, want) || !strings.Contains(m.Verdict.Summary, "0 of 400 from us-east") {
		t.Errorf("summary %q; want %q and us-east's 0 of 400", m.Verdict.Summary, want)
	}

	if want := "IPv6 (2001:db8::10) answers 502; only eu-west sees 2001:db8::10 fail"; m.Verdict.Headline != want {
		t.Errorf("headline %q; want %q", m.Verdict.Headline, want)
	}
	// A single run, and a merge of runs of one vantage, name none.
	one, err := fixture.MergeJudged([]*report.Report{fixture.VantageRun(t, "eu-west", 0, 60), fixture.VantageRun(t, "eu-west", 5e9, 0)},
		[]string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Vantages) != 1 || len(one.Verdict.Vantages) != 0 || strings.Contains(one.Verdict.Summary, "vantage") {
		t.Errorf("one vantage: breakdown %+v, verdict vantages %+v, summary %q", one.Vantages, one.Verdict.Vantages, one.Verdict.Summary)
	}
	// Reports without a vantage (written before it) merge as before.
	old, err := fixture.MergeJudged([]*report.Report{fixture.VantageRun(t, "", 0, 0), fixture.VantageRun(t, "", 5e9, 0)},
		[]string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if old.Vantages != nil {
		t.Errorf("no vantage named: breakdown %+v; want none", old.Vantages)
	}
}

// TestReadVantagesRefused: a saved report whose vantages are forged —
// a bad name, counts that do not add up, an endpoint it does not have — is
// refused on read with one line naming the fault.
func TestReadVantagesRefused(t *testing.T) {
	m := fixture.VantageMerge(t)
	good, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		change func(r *report.Report)
		want   string
	}{
		{"bad run vantage", func(r *report.Report) { r.Vantage = "eu west" }, `vantage "eu west"`},
		{"bad input vantage", func(r *report.Report) { r.Inputs[0].Vantage = "<b>" }, `vantage "<b>"`},
		{"bad name", func(r *report.Report) { r.Vantages[0].Name = "a\x1b[2J" }, "vantages"},
		{"twice", func(r *report.Report) { r.Vantages[1].Name = r.Vantages[0].Name }, "listed twice"},
		{"more failed", func(r *report.Report) {
			r.Vantages[0].Endpoints[1].Failed = 61
			r.Vantages[0].Endpoints[1].Timeline = nil
		}, "add up"},
		{"timeline sum", func(r *report.Report) { r.Vantages[0].Endpoints[1].Failed = 61 }, "timeline: 200 requests, 60 failed; the endpoint has 200, 61"},
		{"timeline past the report's", func(r *report.Report) { r.Vantages[0].Endpoints[1].Timeline.First = 1 << 40 }, "timeline: buckets"},
		{"timeline lengths", func(r *report.Report) {
			tl := r.Vantages[0].Endpoints[1].Timeline
			tl.Failed = tl.Failed[1:]
		}, "request buckets"},
		{"timeline failed past requests", func(r *report.Report) {
			tl := r.Vantages[0].Endpoints[1].Timeline
			tl.Failed[0] = tl.Requests[0] + 1
		}, "failed of"},
		{"timeline moved", func(r *report.Report) {
			// The same counts, a bucket later: each vantage adds up, but
			// not to the endpoint's timeline.
			tl := r.Vantages[0].Endpoints[1].Timeline
			n := len(tl.Requests) - 1
			lastR, lastF := tl.Requests[n], tl.Failed[n]
			tl.First++
			tl.Requests, tl.Failed = tl.Requests[:n], tl.Failed[:n]
			tl.Requests[0] += lastR
			tl.Failed[0] += lastF
		}, "timelines do not add up"},
		{"failed past requests", func(r *report.Report) {
			r.Vantages[1].Endpoints[0].Failed = 500
		}, "500 failed of 400 requests"},
		{"unknown endpoint", func(r *report.Report) { r.Vantages[0].Endpoints[0].Address = "192.0.2.99" }, "not among the report's"},
		{"family", func(r *report.Report) { r.Vantages[0].Families["ipv6"] = report.ConnStats{Requests: 1} }, "family ipv6"},
		{"runs", func(r *report.Report) { r.Vantages[1].Runs = 5 }, "runs for 3 inputs"},
		{"no inputs", func(r *report.Report) { r.Inputs = nil }, "no inputs"},
	} {
		t.Run(tt.name, func(t *testing.T) { forgedRefused(t, good, tt.change, tt.want) })
	}
	if _, err := report.Parse(good, "good.json"); err != nil {
		t.Errorf("the unforged report: %v", err)
	}
}

// TestMergeVantagesApart: runs of two vantages an hour apart, the first
// while an address failed: the merge keeps when each vantage's requests
// were sent, and its verdict blames no vantage, saying why. A merged input
// that kept no timeline of its vantages (merged before they were kept)
// leaves them unknown: no vantage is compared.
func TestMergeVantagesApart(t *testing.T) {
	eu, us := fixture.VantageRun(t, "eu-west", 0, 60), fixture.VantageRun(t, "us-east", time.Hour, 0)
	m, err := fixture.MergeJudged([]*report.Report{eu, us}, []string{"eu-west.json", "us-east.json"})
	if err != nil {
		t.Fatal(err)
	}
	m = docfix.RoundTrip(t, m, "apart.json")
	for _, v := range m.Vantages {
		for _, e := range v.Endpoints {
			if e.Timeline == nil || len(e.Timeline.Requests) == 0 {
				t.Fatalf("%s %s: no timeline", v.Name, e.Address)
			}
		}
	}
	if eu, us := m.Vantages[0].Endpoints[1].Timeline, m.Vantages[1].Endpoints[1].Timeline; eu.First+len(eu.Requests) > us.First {
		t.Errorf("eu-west's timeline %d+%d overlaps us-east's from %d", eu.First, len(eu.Requests), us.First)
	}
	if len(m.Verdict.Vantages) != 0 || strings.Contains(m.Verdict.Headline, "sees") {
		t.Errorf("a vantage is blamed: %+v, headline %q", m.Verdict.Vantages, m.Verdict.Headline)
	}
	want := "No vantage is blamed: the vantages probed at different times (eu-west 20:43:00.000–20:43:20.000 UTC; us-east 21:43:00.000–21:43:20.000 UTC)"
	if !strings.Contains(strings.Join(m.Verdict.Notes, "\n"), want) {
		t.Errorf("notes %q; want %q", m.Verdict.Notes, want)
	}

	// The same at the same time blames eu-west; without the vantages'
	// timelines (as merged before they were kept), none is compared.
	same := fixture.VantageMerge(t)
	if len(same.Verdict.Vantages) != 1 {
		t.Fatalf("at the same time: findings %+v; want eu-west's", same.Verdict.Vantages)
	}
	for vi := range same.Vantages {
		for x := range same.Vantages[vi].Endpoints {
			same.Vantages[vi].Endpoints[x].Timeline = nil
		}
	}
	old := docfix.RoundTrip(t, same, "old.json")
	ap := fixture.VantageRun(t, "ap-south", 0, 0)
	ap.RunID = "0000e004"
	again, err := fixture.MergeJudged([]*report.Report{old, ap}, []string{"old.json", "ap-south.json"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range again.Vantages {
		for _, e := range v.Endpoints {
			if (e.Timeline == nil) != (v.Name != "ap-south") {
				t.Errorf("%s %s: timeline %+v; want one only where the input kept it (ap-south)", v.Name, e.Address, e.Timeline)
			}
		}
	}
	if len(again.Verdict.Vantages) != 0 || !strings.Contains(strings.Join(again.Verdict.Notes, "\n"), "The vantages are not compared with each other, and none is blamed") {
		t.Errorf("without timelines: findings %+v, notes %q; want none, and a note", again.Verdict.Vantages, again.Verdict.Notes)
	}
}
