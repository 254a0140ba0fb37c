package compare_test

import (
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestCompareMatch: how endpoints are matched, by URL and address or with
// --match host, and what reports that probed other things are called:
// nothing that was not probed again (other URLs, or a URL on other
// addresses) is an improvement.
func TestCompareMatch(t *testing.T) {
	const (
		site  = "https://sign.example.com/"
		api   = "https://sign.example.com/api"
		port1 = "https://sign.example.com:8443/"
		port2 = "https://sign.example.com:9443/"
	)
	ep := func(target, addr string, failed int) fixture.CmpEndpoint {
		return fixture.CmpEndpoint{Target: target, Address: addr, N: 300, Failed: failed, FailStatus: 502, Latency: time.Millisecond}
	}
	only4 := func(r *report.Report) { r.Plan.Only = "ipv4" }
	tests := []struct {
		name          string
		match         string
		before, after []fixture.CmpEndpoint
		edit          func(before, after *report.Report)
		status        string
		conclusion    string
		partial       bool
		common        int
	}{
		{"another port", compare.MatchEndpoint,
			[]fixture.CmpEndpoint{ep(port1, "127.0.0.1", 0), ep(port1, "127.0.0.2", 90)},
			[]fixture.CmpEndpoint{ep(port2, "127.0.0.1", 0), ep(port2, "127.0.0.2", 0)}, nil,
			compare.Disjoint, "no endpoint in common: BEFORE probed 127.0.0.1, 127.0.0.2 at " + port1 + "; AFTER probed 127.0.0.1, 127.0.0.2 at " + port2 +
				"; only the port differs: --match host compares them", false, 0},
		{"another port, --match host", compare.MatchHost,
			[]fixture.CmpEndpoint{ep(port1, "127.0.0.1", 0), ep(port1, "127.0.0.2", 90)},
			[]fixture.CmpEndpoint{ep(port2, "127.0.0.1", 0), ep(port2, "127.0.0.2", 0)}, nil,
			compare.Improved, "failures gone: 127.0.0.2 30% → 0%, p<1e-9; 127.0.0.1 0% → 0%", false, 2},
		{"the scheme's own port, --match host", compare.MatchHost,
			[]fixture.CmpEndpoint{ep("https://sign.example.com:443/", "127.0.0.1", 0)},
			[]fixture.CmpEndpoint{ep(site, "127.0.0.1", 0)}, nil,
			compare.Unchanged, "no significant change (total 0% → 0%, p=1; p50 1.20 → 1.20ms): 127.0.0.1 0% → 0%", false, 1},
		{"another path, --match host", compare.MatchHost,
			[]fixture.CmpEndpoint{ep(site, "127.0.0.1", 90)},
			[]fixture.CmpEndpoint{ep(api, "127.0.0.1", 0)}, nil,
			compare.Disjoint, "no endpoint in common: BEFORE probed 127.0.0.1 at " + site + "; AFTER probed 127.0.0.1 at " + api + "; the paths differ", false, 0},
		{"other addresses of the URL, --match host", compare.MatchHost,
			[]fixture.CmpEndpoint{ep(site, "127.0.0.1", 0), ep(site, "127.0.0.2", 0)},
			[]fixture.CmpEndpoint{ep(site, "127.0.0.3", 0), ep(site, "127.0.0.4", 90)}, nil,
			compare.Regressed, "regression: 127.0.0.4 (new) 30% against 0% before, p<1e-9", false, 0},
		{"a URL probed before only", compare.MatchEndpoint,
			[]fixture.CmpEndpoint{ep(site, "127.0.0.1", 0), ep(api, "127.0.0.1", 90)},
			[]fixture.CmpEndpoint{ep(site, "127.0.0.1", 0)}, nil,
			compare.Unchanged, "no significant change: 127.0.0.1 / 0% → 0%; 127.0.0.1 /api removed; partial: BEFORE alone probed " + api, true, 1},
		{"IPv6 left out by -4", compare.MatchEndpoint,
			[]fixture.CmpEndpoint{ep(site, "127.0.0.1", 0), ep(site, "::1", 300)},
			[]fixture.CmpEndpoint{ep(site, "127.0.0.1", 0)}, func(_, a *report.Report) { only4(a) },
			compare.Unchanged, "no significant change: 127.0.0.1 0% → 0%; ::1 removed; partial: AFTER probed IPv4 only (-4)", true, 1},
		{"two ports in one report stay apart, --match host", compare.MatchHost,
			[]fixture.CmpEndpoint{ep(port1, "127.0.0.1", 0), ep(port2, "127.0.0.1", 90)},
			[]fixture.CmpEndpoint{ep(port1, "127.0.0.1", 0), ep(port2, "127.0.0.1", 90)}, nil,
			compare.Unchanged, "no significant change (total 15% → 15%, p=1; p50 1.20 → 1.20ms): 127.0.0.1 sign.example.com:8443/ 0% → 0%; 127.0.0.1 sign.example.com:9443/ 30% → 30%", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, a := runs(t, tt.before, tt.after)
			if tt.edit != nil {
				tt.edit(b, a)
			}
			o := compare.DefaultOptions()
			o.Match = tt.match
			c := compare.ReportsWith(b, a, o)
			if c.Status != tt.status || c.Conclusion != tt.conclusion {
				t.Errorf("%s: %q;\nwant %s: %q", c.Status, c.Conclusion, tt.status, tt.conclusion)
			}
			if c.Partial != tt.partial || c.Common != tt.common || c.Match != tt.match {
				t.Errorf("partial %v, %d in common, match %q; want %v, %d, %q", c.Partial, c.Common, c.Match, tt.partial, tt.common, tt.match)
			}
			if (c.Partial || c.Status == compare.Disjoint) && (c.Totals.Tested || c.Totals.Latency.Tested || len(c.Totals.Answers) > 0) {
				t.Errorf("%s: the total was tested (failures %v, latency %v, %d answers); want it shown only", c.Status, c.Totals.Tested, c.Totals.Latency.Tested, len(c.Totals.Answers))
			}
		})
	}
}
