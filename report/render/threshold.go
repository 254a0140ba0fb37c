package render

import (
	"fmt"
	"strconv"

	"github.com/pinprobe/pinprobe/report"
	"github.com/pinprobe/pinprobe/report/phrase"
)

// thresholdWords says one check in a line: "max-failure-rate in endpoint ::1
// (URL): 100% > 0.1%".
func thresholdWords(t *report.Threshold) string {
	limit := thresholdValue(t, t.Limit)
	switch t.Status {
	case report.ThresholdNotJudged:
		return fmt.Sprintf("%s, %s: not judged, no request reached it (limit %s)", t.Name, t.Scope, limit)
	case report.ThresholdBreached:
		return fmt.Sprintf("%s, %s: %s > %s", t.Name, t.Scope, thresholdValue(t, *t.Value), limit)
	}
	return fmt.Sprintf("%s, %s: %s ≤ %s", t.Name, t.Scope, thresholdValue(t, *t.Value), limit)
}

func thresholdValue(t *report.Threshold, v float64) string {
	switch t.Unit {
	case "ratio":
		return phrase.PctRate(v)
	case "ms":
		return phrase.Latency(v, 1)
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " suspect" + phrase.Plural(int(v))
}
