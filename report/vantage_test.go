package report_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/report"
)

func TestCheckVantage(t *testing.T) {
	for _, ok := range []string{"eu-west-1a", "us-central1-b", "laptop.corp", "A_1", strings.Repeat("z", 63)} {
		if err := report.CheckVantage(ok); err != nil {
			t.Errorf("CheckVantage(%q) = %v; want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", ".a", "eu west", "a/b", "a\x00", "é", strings.Repeat("z", 64), "<script>"} {
		if err := report.CheckVantage(bad); err == nil {
			t.Errorf("CheckVantage(%q) = nil; want an error", bad)
		}
	}
	for host, want := range map[string]string{
		"build-7.corp.example":  "build-7.corp.example",
		"-odd host!":            "odd-host-",
		"___":                   "",
		"ü-box":                 "box",
		strings.Repeat("h", 80): strings.Repeat("h", 63),
	} {
		got := report.HostVantage(host)
		if got != want {
			t.Errorf("HostVantage(%q) = %q; want %q", host, got, want)
		}
		if got != "" && report.CheckVantage(got) != nil {
			t.Errorf("HostVantage(%q) = %q, not a vantage name", host, got)
		}
	}
}

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
	if us.Name != "us-east" || us.Runs != 2 || us.Requests != 800 || us.Failed != 0 || len(us.Endpoints) != 2 ||
		us.Endpoints[1] != (report.VantageEndpoint{Target: "https://sign.example.com/", Address: "2001:db8::10", Family: "ipv6", Requests: 400}) {
		t.Errorf("us-east: %+v", us)
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
		{"more failed", func(r *report.Report) { r.Vantages[0].Endpoints[1].Failed = 61 }, "add up"},
		{"failed past requests", func(r *report.Report) {
			r.Vantages[1].Endpoints[0].Failed = 500
		}, "500 failed of 400 requests"},
		{"unknown endpoint", func(r *report.Report) { r.Vantages[0].Endpoints[0].Address = "192.0.2.99" }, "not among the report's"},
		{"family", func(r *report.Report) { r.Vantages[0].Families["ipv6"] = report.ConnStats{Requests: 1} }, "family ipv6"},
		{"runs", func(r *report.Report) { r.Vantages[1].Runs = 5 }, "runs for 3 inputs"},
		{"no inputs", func(r *report.Report) { r.Inputs = nil }, "no inputs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r report.Report
			if err := json.Unmarshal(good, &r); err != nil {
				t.Fatal(err)
			}
			tt.change(&r)
			b, err := json.Marshal(&r)
			if err != nil {
				t.Fatal(err)
			}
			_, err = report.ParseReport(b, "forged.json")
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "\x1b") {
				t.Errorf("ParseReport = %v; want one line with %q", err, tt.want)
			}
		})
	}
	if _, err := report.ParseReport(good, "good.json"); err != nil {
		t.Errorf("the unforged report: %v", err)
	}
}
