package docfix

import (
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
)

// GateReport is a report of one URL on the given endpoints, each with its
// requests, failures and every latency lat, at rate req/s planned.
func GateReport(rate float64, lat time.Duration, eps ...[2]int64) *report.Report {
	r := &report.Report{Plan: report.Plan{Rate: rate}, Families: report.FamilyStats{}}
	total, fam := report.NewLatencyHist(), report.NewLatencyHist()
	r.Totals.Status, r.Families["ipv4"] = map[string]int64{}, &report.Stats{}
	for i, e := range eps {
		h := report.NewLatencyHist()
		for range e[0] {
			h.Record(lat.Microseconds())
			total.Record(lat.Microseconds())
			fam.Record(lat.Microseconds())
		}
		s := report.Stats{Requests: e[0], OK: e[0] - e[1], Failed: e[1], HDR: h.Encode()}
		s.FailureRate = float64(e[1]) / float64(e[0])
		s.LatencyMS.P99 = report.MicrosToMillis(h.ValueAtQuantile(99))
		r.Endpoints = append(r.Endpoints, report.Endpoint{Stats: s, Target: "https://sign.example.com/",
			Address: "192.0.2." + string(rune('1'+i)), Family: "ipv4"})
		for _, sc := range []*report.Stats{&r.Totals, r.Families["ipv4"]} {
			sc.Requests += e[0]
			sc.Failed += e[1]
			sc.OK += e[0] - e[1]
		}
	}
	for sc, h := range map[*report.Stats]*report.Hist{&r.Totals: total, r.Families["ipv4"]: fam} {
		sc.HDR, sc.FailureRate = h.Encode(), float64(sc.Failed)/float64(sc.Requests)
		sc.LatencyMS.P99 = report.MicrosToMillis(h.ValueAtQuantile(99))
	}
	return r
}
