package report_test

import (
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/report"
)

func TestValidateAcceptsWhatTheAggregatorWrites(t *testing.T) {
	if err := report.Validate(docfix.SavedGolden(t)); err != nil {
		t.Fatalf("Validate(golden report) = %v; want nil", err)
	}
}

// TestValidateRefusesBrokenReports breaks one invariant at a time.
func TestValidateRefusesBrokenReports(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *report.Report)
		want   string
	}{
		{"schema", func(r *report.Report) { r.Schema = "pinprobe.report/v9" }, "schema"},
		{"ok+failed", func(r *report.Report) { r.Endpoints[0].OK++ }, "requests 40 != ok 41"},
		{"endpoint sum", func(r *report.Report) {
			e := &r.Endpoints[0]
			e.Requests++
			e.OK++
			e.Status["200"]++
			e.FailureRate = float64(e.Failed) / float64(e.Requests)
		}, "its endpoints add up"},
		{"status sum", func(r *report.Report) { r.Totals.Status["200"]-- }, "statuses and errors add up"},
		{"failure rate", func(r *report.Report) { r.Families["ipv6"].FailureRate = 0.9 }, "failure_rate"},
		{"hdr count", func(r *report.Report) { r.Endpoints[1].HDR = r.Endpoints[2].HDR }, "hdr holds"},
		{"hdr garbage", func(r *report.Report) { r.Totals.HDR = "not a histogram" }, "does not decode"},
		{"timeline", func(r *report.Report) { r.Timeline.Series[2].Failed[0]++ }, "timeline"},
		{"unknown family", func(r *report.Report) { r.Endpoints[0].Family = "ipv5" }, "not in families"},
		{"abandoned sum", func(r *report.Report) { r.Endpoints[0].Abandoned = 2 }, "totals: 0 requests abandoned, but its endpoints add up to 2"},
		{"abandoned negative", func(r *report.Report) { r.Totals.Abandoned = -1 }, "negative count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := docfix.SavedGolden(t)
			tt.mutate(r)
			err := report.Validate(r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}
