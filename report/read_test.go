package report_test

import (
	"bytes"
	"strings"
	"testing"

	"pinprobe/internal/fixture"
	"pinprobe/report"
)

// goldenJSON is the golden report as saved.
func goldenJSON(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := report.JSON(&buf, fixture.GoldenReport(t)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadReportRefusesImpossibleNumbers: numbers no run can produce —
// negative counts that still add up, a bucket failing more requests than it
// holds, durations and timestamps that overflow the arithmetic of a merge —
// are refused with where they are, instead of being shown (200×45 404×-5)
// or panicking the renderer or the merge.
func TestReadReportRefusesImpossibleNumbers(t *testing.T) {
	good := goldenJSON(t)
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"negative status that adds up", func(m map[string]any) {
			for _, s := range []map[string]any{fixture.Obj(t, m, "endpoints", "0", "status"), fixture.Obj(t, m, "families", "ipv4", "status"), fixture.Obj(t, m, "totals", "status")} {
				s["200"] = s["200"].(float64) + 5
				s["404"] = -5.0
			}
		}, `totals.status."404": -5 is negative`},
		{"negative bytes", func(m map[string]any) { fixture.Obj(t, m, "endpoints", "0")["bytes"] = -1.0 }, "endpoints[0].bytes: -1 is negative"},
		{"negative fingerprint count", func(m map[string]any) { fixture.Obj(t, m, "fingerprints", "0")["fresh"] = -3.0 }, "fingerprints[0].fresh: -3 is negative"},
		{"negative latency", func(m map[string]any) { fixture.Obj(t, m, "endpoints", "1", "latency_ms")["min"] = -0.5 }, "endpoints[1].latency_ms.min: -0.5 is negative"},
		{"count past 2^40", func(m map[string]any) { fixture.Obj(t, m, "endpoints", "1", "conns")["connections"] = 1e15 }, "endpoints[1].conns.connections: 1000000000000000 is more than"},
		{"bucket failing more than it holds", func(m map[string]any) {
			req := fixture.Arr(t, m, "timeline", "series", "1", "requests")
			req[0], req[1] = 1.0, 7.0 // the sums still match the endpoint's
		}, "timeline 2001:db8::7 (https://sign.example.com/): bucket 0: 3 failed of 1 requests"},
		{"interval of 127 years", func(m map[string]any) { fixture.Obj(t, m, "timeline")["interval_s"] = 4e9 }, "timeline.interval_s: 4e+09 is larger"},
		{"timeline over a century", func(m map[string]any) { fixture.Obj(t, m, "timeline")["interval_s"] = 3.1e9 }, "10 buckets of 3.1e+09 s cover more than 100 years"},
		{"timeline in year one", func(m map[string]any) { fixture.Obj(t, m, "timeline")["start"] = "0001-01-01T00:00:00.001Z" }, "timeline.start: time 0001-01-01T00:00:00Z is outside 1970 to 2200"},
		{"timeline without a start", func(m map[string]any) { fixture.Obj(t, m, "timeline")["start"] = "0001-01-01T00:00:00.000Z" }, "timeline: buckets but no start"},
		{"sample in 2500", func(m map[string]any) {
			fixture.Obj(t, m, "endpoints", "1", "samples", "0")["at"] = "2500-01-01T00:00:00.000Z"
		}, "endpoints[1].samples[0].at: time 2500-01-01T00:00:00Z is outside"},
		{"send window of a thousand years", func(m map[string]any) { m["send_s"] = 3.2e10 }, "send_s: 3.2e+10 is larger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := fixture.EditJSON(t, good, tt.edit)
			_, err := report.ReadReport(bytes.NewReader(doc), "forged.json")
			if err == nil || !strings.HasPrefix(err.Error(), "read report forged.json: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadReport = %v; want an error naming forged.json and containing %q", err, tt.want)
			}
		})
	}
	if _, err := report.ReadReport(bytes.NewReader(fixture.EditJSON(t, good, func(map[string]any) {})), "same.json"); err != nil {
		t.Errorf("ReadReport(golden report through EditJSON) = %v; want nil", err)
	}
}

// TestMergeRefusesTimelinesCenturiesApart: each timeline is sound, but the
// merged grid would span 209 years, past what a time.Duration holds: the
// merge says so instead of overflowing into a negative bucket.
func TestMergeRefusesTimelinesCenturiesApart(t *testing.T) {
	good := goldenJSON(t)
	read := func(name, start string) *report.Report {
		doc := fixture.EditJSON(t, good, func(m map[string]any) { fixture.Obj(t, m, "timeline")["start"] = start })
		r, err := report.ReadReport(bytes.NewReader(doc), name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := read("a.json", "1971-01-01T00:00:00.000Z"), read("b.json", "2180-01-01T00:00:00.000Z")
	a.Totals.Bytes++ // not the same run
	_, err := report.Merge([]*report.Report{a, b}, []string{"a.json", "b.json"})
	if err == nil || !strings.Contains(err.Error(), "merge b.json: its timeline ends 209 years after that of a.json starts") {
		t.Errorf("Merge = %v; want it to name b.json, a.json and the 209 years", err)
	}
}
