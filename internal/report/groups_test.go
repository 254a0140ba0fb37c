package report

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGroupTimes: a failing group's time strata hold, per address and
// slice of the run, its responses against the other responses of the
// address then, only where both answered; a group that never failed has
// none; a long run keeps at most maxGroupSlices slices; a merge adds the
// strata of its inputs by shape.
func TestGroupTimes(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var g GroupTally
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	resp := func(header, value, addr string, s float64, failed bool) {
		g.Response(addr, at(s), failed)
		if value != "" {
			g.Add(header, value, addr, at(s), Outcome{Status: 200, Failed: failed})
		}
	}
	// Second 0 on A: pod-a 2 (1 failed), pod-b 2, one without a header
	// (failed). Second 1 on A: pod-a alone. Second 0 on B: pod-a 1, pod-b 1.
	resp("X-Pod", "pod-a", "A", 0.1, true)
	resp("X-Pod", "pod-a", "A", 0.2, false)
	resp("X-Pod", "pod-b", "A", 0.3, false)
	resp("X-Pod", "pod-b", "A", 0.4, false)
	resp("", "", "A", 0.5, true)
	resp("X-Pod", "pod-a", "A", 1.5, true)
	resp("X-Pod", "pod-a", "B", 0.6, false)
	resp("X-Pod", "pod-b", "B", 0.7, false)
	byValue := map[string]Group{}
	for _, gr := range g.Report(2) {
		byValue[gr.Value] = gr
	}
	want := []TimeCounts{
		{Requests: 1, Failed: 0, RestRequests: 1, RestFailed: 0, Strata: 1}, // B, second 0
		{Requests: 2, Failed: 1, RestRequests: 3, RestFailed: 1, Strata: 1}, // A, second 0
	}
	if got := byValue["pod-a"].Times; !slices.Equal(got, want) {
		t.Errorf("pod-a: times %+v; want %+v (second 1 on A has no other response)", got, want)
	}
	if got := byValue["pod-b"].Times; len(got) != 0 || got == nil {
		t.Errorf("pod-b, which never failed: times %+v; want [] (not null)", got)
	}

	// A long run: at most maxGroupSlices slices, all counts kept.
	var long GroupTally
	for s := range 1000 {
		for _, v := range []string{"pod-a", "pod-b"} {
			long.Response("A", at(float64(s)), v == "pod-a")
			long.Add("X-Pod", v, "A", at(float64(s)), Outcome{Status: 200, Failed: v == "pod-a"})
		}
	}
	if long.width != 16*time.Second {
		t.Errorf("1000 s: slices of %v; want 16 s (1000 s in at most %d)", long.width, maxGroupSlices)
	}
	var n, strata int64
	for _, gr := range long.Report(1000) {
		if gr.Value != "pod-a" {
			continue
		}
		for _, tc := range gr.Times {
			n += tc.Requests * tc.Strata
			strata += tc.Strata
		}
	}
	if n != 1000 || strata > maxGroupSlices {
		t.Errorf("1000 s: %d responses in %d strata; want all 1000 in at most %d", n, strata, maxGroupSlices)
	}

	// A merge adds up the strata of each input by shape: the same run
	// twice has every stratum twice.
	var m GroupTally
	for range 2 {
		for _, gr := range g.Report(2) {
			m.AddSaved(&gr)
		}
	}
	for _, gr := range m.Report(4) {
		if gr.Value != "pod-a" {
			continue
		}
		twice := slices.Clone(want)
		for i := range twice {
			twice[i].Strata *= 2
		}
		if !slices.Equal(gr.Times, twice) {
			t.Errorf("merged pod-a: times %+v; want %+v", gr.Times, twice)
		}
	}
}

// TestCheckSavedGroupTimes: a saved report's time strata are refused when
// they cannot be: negative, more failures than responses, no stratum,
// more responses than the group's, or past the bound.
func TestCheckSavedGroupTimes(t *testing.T) {
	base := func(ts ...TimeCounts) *Report {
		r := &Report{Groups: []Group{{Header: "X-Pod", Value: "pod-a", Stats: Stats{Requests: 10, Failed: 2}, Times: ts}}}
		return r
	}
	tests := []struct {
		name string
		ts   []TimeCounts
		want string // "" for accepted
	}{
		{"good", []TimeCounts{{Requests: 5, Failed: 2, RestRequests: 9, RestFailed: 1, Strata: 2}}, ""},
		{"no strata", []TimeCounts{{Requests: 5, Failed: 2, RestRequests: 9, RestFailed: 1, Strata: 0}}, "impossible counts"},
		{"failed past requests", []TimeCounts{{Requests: 1, Failed: 2, RestRequests: 9, RestFailed: 1, Strata: 1}}, "impossible counts"},
		{"rest failed past rest", []TimeCounts{{Requests: 1, Failed: 0, RestRequests: 1, RestFailed: 2, Strata: 1}}, "impossible counts"},
		{"negative", []TimeCounts{{Requests: 1, Failed: -1, RestRequests: 1, RestFailed: 0, Strata: 1}}, "impossible counts"},
		{"more than the group", []TimeCounts{{Requests: 6, Failed: 0, RestRequests: 1, RestFailed: 0, Strata: 2}}, "more responses than the group's 10"},
		{"strata times overflow", []TimeCounts{{Requests: 1, Failed: 0, RestRequests: 1 << 40, RestFailed: 0, Strata: 2}}, "others"},
		{"too many", make([]TimeCounts, MaxGroupTimes+1), "time strata (at most"},
	}
	for _, tt := range tests {
		err := checkGroupTimes(&base(tt.ts...).Groups[0])
		if tt.want == "" && err != "" || tt.want != "" && !strings.Contains(err, tt.want) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.want)
		}
	}
}
