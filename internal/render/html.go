package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// HTML writes the report as one self-contained HTML page for a browser or a
// ticket attachment: the report's page (reportPage), with the charts only
// a browser draws (failures over time, requests and latency over time,
// the answers per family, latency per endpoint, failures per instance). It
// loads nothing and runs no script; it prints readably.
func HTML(w io.Writer, r *report.Report) error {
	if err := writePageHTML(w, pageOf(r, false, false)); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// f formats a coordinate to one decimal, the precision of every number in
// the page's SVG, so the output is byte-stable.
func f(x float64) string {
	s := strconv.FormatFloat(x, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		return "0"
	}
	return s
}

// ciBar draws a failure rate and its Wilson 95% interval on 0–100%, in a
// 100 × 12 box.
type ciBar struct {
	Failing       bool
	Lo, Width, At string
	Title         string
}

func newCIBar(iv *Interval) *ciBar {
	return &ciBar{
		Failing: iv.Failing,
		Lo:      f(iv.Lo * 100), Width: f(max((iv.Hi-iv.Lo)*100, 1)), At: f(iv.Rate * 100),
		Title: fmt.Sprintf("failure rate %s, 95%% interval %s", words.PctRate(iv.Rate), words.CIRange(iv.Lo, iv.Hi)),
	}
}

// intervalOf is s's failure rate and its interval, for HTML to draw; nil
// when nothing was sent.
func intervalOf(s *report.Stats, failing bool) *Interval {
	if s == nil || s.Requests <= 0 {
		return nil
	}
	lo, hi := failureCI(s.Failed, s.Requests)
	return &Interval{Rate: float64(s.Failed) / float64(s.Requests), Lo: lo, Hi: hi, Failing: failing}
}
