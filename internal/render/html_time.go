package render

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/words"
)

// The charts over time are small multiples, one per family and suspect,
// each drawn at its natural size (tsW units are about as many CSS pixels:
// see html.css) so that two or three fit side by side on a wide screen and
// one on a narrow one, their text never scaled far from its size: a lane
// of requests per second (failed ones in the failure colour) over a lane of
// p50 and p99 latency, on one time axis.
const (
	tsW      = 560.0
	tsX0     = 54.0  // the plot's left edge; the lanes' scales to its left
	tsX1     = 528.0 // room for half the last time label
	tsPlotW  = tsX1 - tsX0
	tsRateY  = 10.0 // the requests lane
	tsRateH  = 58.0
	tsLatY   = 90.0 // the latency lane
	tsLatH   = 80.0
	tsAxisY  = tsLatY + tsLatH + 4
	tsHeight = tsAxisY + 30
)

// overTimeCharts is the charts of the families and suspects over time.
type overTimeCharts struct {
	Charts []*timeChart
	Note   string
	Axis   string // what one slice is: "one column per 1 s"
}

// timeChart is one scope over time.
type timeChart struct {
	ID, Kind, What, Label, Tag, Summary string
	Failing, Suspect, Latency           bool
	W, Height, RateH, LatH              string
	RateTop, LatTop                     string    // the lanes' top edges
	Sent, Fails                         string    // paths of the requests lane's columns
	P50, P99                            string    // step lines of the latency lane
	Grid                                []yTick   // the lanes' scales
	Axis                                axis      // time
	Cols                                []svgRect // one per slice with requests, with its numbers
	Desc                                string
}

// yTick is one labelled tick of a lane's scale.
type yTick struct {
	Y, Label string
}

func newOverTimeCharts(v *View) *overTimeCharts {
	o := &v.OverTime
	if o.Columns == 0 || len(o.Scopes) == 0 {
		return nil
	}
	out := &overTimeCharts{Note: o.Note, Axis: "one column per " + durationWords(o.Step)}
	for i := range o.Scopes {
		out.Charts = append(out.Charts, newTimeChart(o, i))
	}
	return out
}

func newTimeChart(o *OverTimeView, i int) *timeChart {
	s := &o.Scopes[i]
	colW := tsPlotW / float64(o.Columns)
	gap := colGap(colW)
	c := &timeChart{ID: fmt.Sprintf("over-time-%d", i+1), Kind: s.Kind, What: s.What, Label: s.Label, Tag: s.Tag, Summary: s.Summary,
		Failing: s.Failing, Suspect: s.Suspect, Latency: s.Latency,
		W: f(tsW), Height: f(tsHeight), RateH: f(tsRateH), LatH: f(tsLatH), RateTop: f(tsRateY), LatTop: f(tsLatY)}
	// The requests lane: requests per second, to a round top.
	peak := 0.0
	for _, n := range s.Requests {
		peak = max(peak, float64(n)/o.Step)
	}
	top := rateCeil(peak)
	rateY := func(rps float64) float64 { return tsRateY + tsRateH - rps/top*tsRateH }
	c.Grid = []yTick{{Y: f(tsRateY), Label: rateWords(top)}, {Y: f(tsRateY + tsRateH), Label: "0"}}
	var sent, fails strings.Builder
	for col, n := range s.Requests {
		if n == 0 {
			continue
		}
		x := tsX0 + float64(col)*colW + gap/2
		k := s.Failed[col]
		yAll, yFail := rateY(float64(n)/o.Step), rateY(float64(k)/o.Step)
		if n > k {
			fmt.Fprintf(&sent, "M%s %sH%sV%sH%sz", f(x), f(yAll), f(x+colW-gap), f(yFail), f(x))
		}
		if k > 0 {
			yFail = min(yFail, tsRateY+tsRateH-1.5) // any failure shows
			fmt.Fprintf(&fails, "M%s %sH%sV%sH%sz", f(x), f(yFail), f(x+colW-gap), f(tsRateY+tsRateH), f(x))
		}
		title := fmt.Sprintf("%s, %s–%s UTC: %d request%s (%s), %d failed (%s)", s.Label, clockOf(o.At(col), o.Step), clockOf(o.At(col+1), o.Step),
			n, words.Plural(int(n)), rateWords(float64(n)/o.Step), k, words.PctRate(float64(k)/float64(n)))
		if s.Latency {
			title += fmt.Sprintf("; p50 %s, p99 %s", words.Latency(s.P50[col], n), words.Latency(s.P99[col], n))
		}
		c.Cols = append(c.Cols, svgRect{X: f(tsX0 + float64(col)*colW), Y: f(tsRateY), W: f(colW), H: f(tsLatY + tsLatH - tsRateY), Title: title})
	}
	c.Sent, c.Fails = sent.String(), fails.String()
	// The latency lane: p50 and p99, linear from 0 or log scaled when they
	// span more than a factor of 20.
	if s.Latency {
		lo, hi := math.Inf(1), 0.0
		for col, n := range s.Requests {
			if n > 0 {
				lo, hi = min(lo, s.P50[col]), max(hi, s.P99[col])
			}
		}
		if hi > 0 {
			latY, ticks := latencyScale(lo, hi)
			for _, t := range ticks {
				c.Grid = append(c.Grid, yTick{Y: f(latY(t)), Label: msWords(t)})
			}
			c.P50, c.P99 = stepLine(s.Requests, s.P50, colW, latY), stepLine(s.Requests, s.P99, colW, latY)
		}
	}
	c.Axis = axis{X0: f(tsX0), X1: f(tsX1), W: f(tsPlotW), Y: f(tsAxisY), LabelY: "17",
		Ticks: timeTicks(o.From.Time, o.Step*float64(o.Columns), tsX0, tsPlotW, 6)}
	c.Desc = fmt.Sprintf("%s over time, from %s UTC, one column per %s: requests per second (up to %s), failed ones in the failure colour",
		s.Label, clockOf(o.At(0), o.Step), durationWords(o.Step), rateWords(peak))
	if s.Latency {
		c.Desc += ", and the p50 and p99 latency"
	}
	c.Desc += ". " + words.Capitalize(s.Summary) + "."
	return c
}

// latencyScale maps milliseconds to the latency lane, linear from 0 or
// log scaled when lo to hi spans more than a factor of 20, with its ticks.
func latencyScale(lo, hi float64) (func(float64) float64, []float64) {
	at, all, log := msScale(lo, hi, 3)
	y := func(ms float64) float64 { return tsLatY + tsLatH - at(ms)*tsLatH }
	if !log {
		return y, all
	}
	// Labels at least tsTickGap apart: the powers of ten first, then the
	// ends, then the others (2 and 5 times them).
	var order []float64
	for _, t := range all {
		if e := math.Log10(t); math.Abs(e-math.Round(e)) < 1e-9 {
			order = append(order, t)
		}
	}
	order = append(order, all[0], all[len(all)-1])
	order = append(order, all...)
	var ticks []float64
	for _, t := range order {
		if !slices.ContainsFunc(ticks, func(k float64) bool { return math.Abs(y(k)-y(t)) < tsTickGap }) {
			ticks = append(ticks, t)
		}
	}
	slices.Sort(ticks)
	return y, ticks
}

// tsTickGap is the least distance between two labels of a lane's scale.
const tsTickGap = 16.0

// rateCeil is the top of the requests lane: the least of 1, 1.5, 2, 2.5,
// 3, 4, 5, 6, 8 or 10 × 10^k at least x, so the highest column fills most
// of the lane.
func rateCeil(x float64) float64 { return ceilOf(x, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8) }

// stepLine draws values as a step line over the columns that had requests,
// broken where a column had none.
func stepLine(requests []int64, values []float64, colW float64, y func(float64) float64) string {
	var b strings.Builder
	open := false
	for col, n := range requests {
		if n == 0 {
			open = false
			continue
		}
		x, yv := tsX0+float64(col)*colW, y(values[col])
		if open {
			fmt.Fprintf(&b, "V%sH%s", f(yv), f(x+colW))
		} else {
			fmt.Fprintf(&b, "M%s %sH%s", f(x), f(yv), f(x+colW))
		}
		open = true
	}
	return b.String()
}

// rateWords says a rate of requests: "12/s", "0.5/s".
func rateWords(rps float64) string {
	return strconv.FormatFloat(rps, 'g', 3, 64) + "/s"
}
