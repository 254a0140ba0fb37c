package collect

import (
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// trailOf is what an endpoint's trail (report.Trail) keeps of r, whose
// failure the engine decided.
func trailOf(r *probe.Result, failed bool) report.TrailRequest {
	t := report.TrailRequest{
		At: report.Time{Time: r.Start}, RequestID: r.RequestID, Failed: failed,
		Status: r.Status, LatencyMS: report.Millis(r.Latency),
	}
	if r.ConnID != 0 {
		t.Port, t.Conn = r.Local.Port(), r.ConnID
	}
	if r.Err != nil {
		t.Class = string(r.Class)
	}
	return t
}
