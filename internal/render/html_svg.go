package render

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// The charts share one layout, in SVG user units: a label column on the
// left, the plot, and a column of figures on the right.
const (
	chartW    = 800.0 // the template's viewBox says it too
	plotX0    = 190.0
	plotX1    = 600.0 // 200 units of figures to its right: "p50 12.5ms · p99 22.5ms" in bold
	plotW     = plotX1 - plotX0
	labelRune = 22 // monospace labels cut to this many characters
)

// colourFail is the vermillion of failed requests. The charts use the
// Okabe–Ito colours, told apart with every common colour-vision deficiency;
// the fixed ones (markers, strips) are in html.css.
const colourFail = "#D55E00"

// chart is what the page-wide charts share, drawn by the templates
// chartHead and chartFoot: the SVG's id, the prefix of its title's and
// description's (Key), its classes past "chart", height, legend (above the
// rows, or under the axis) and axis.
type chart struct {
	ID, Key, Class, Title string
	Height, Desc          string
	Legend                []legendItem
	LegendBelow           bool
	Axis                  axis
}

// axis is a horizontal axis at Y under a plot from X0 to X1, W wide: its
// ticks, their labels at LabelY, its title, and the grid's top where a
// chart has one.
type axis struct {
	X0, X1, W, Y, LabelY, GridTop string
	Ticks                         []xTick
	Title                         template.HTML // made of constants and numbers, written as it is
}

// plotAxis is the axis of a page-wide chart at y.
func plotAxis(y float64, ticks []xTick, title template.HTML) axis {
	return axis{X0: f(plotX0), X1: f(plotX1), W: f(plotW), Y: f(y), LabelY: "18", Ticks: ticks, Title: title}
}

// xTick is one labelled tick of a horizontal axis.
type xTick struct {
	X, Label string
}

// pctTicks label the plot from 0 to 100% in quarters.
func pctTicks() []xTick {
	var ticks []xTick
	for p := 0; p <= 100; p += 25 {
		ticks = append(ticks, xTick{X: f(plotX0 + float64(p)/100*plotW), Label: strconv.Itoa(p) + "%"})
	}
	return ticks
}

// chartRow is one row of a chart: a heading naming the URL of the rows
// below (Header), or a labelled row with its figure to the right.
type chartRow struct {
	Header           bool
	Y, Label, Full   string
	Failing, Suspect bool
	Figure, Title    string
}

// colGap is the gap between columns colW wide: none when they are narrow.
func colGap(colW float64) float64 {
	if colW >= 6 {
		return 1
	}
	return 0
}

// svgRect is one rectangle, with a tooltip.
type svgRect struct {
	X, Y, W, H, Title string
}

// legendItem is one key of a legend: a swatch (or a marker) and its text.
type legendItem struct {
	X, Y   string
	Fill   string
	Class  string // the marker or swatch class
	Hatch  bool
	TextX  string
	Text   string
	Marker string // path of a marker, "" for a swatch
}

// layoutLegend places items left to right from x, each as wide as its
// text, starting a new line under the last at y when one would pass the
// chart's right edge, and draws their markers; it returns the y of the
// last line.
func layoutLegend(x, y float64, items []legendItem) float64 {
	x0 := x
	for i := range items {
		w := 18 + float64(runes(items[i].Text))*6.4 + 22
		if x+w > chartW && x > x0 {
			x, y = x0, y+20
		}
		items[i].X, items[i].Y, items[i].TextX = f(x), f(y), f(x+18)
		items[i].Marker = marker(items[i].Class, x+6, y)
		x += w
	}
	return y
}

// chartLabel cuts a row label to the label column.
func chartLabel(s string) string { return words.CutMiddle(s, labelRune) }

// timelineChart is the failure ratio of each endpoint over time: one strip
// per endpoint, one column per interval, the column's height the share of
// its requests that failed.
type timelineChart struct {
	chart
	Rows []timelineRow
}

// timelineRow is one endpoint's strip, or a URL's heading.
type timelineRow struct {
	chartRow
	Sent  string // path of the columns that had requests
	Fails []svgRect
	Marks []timelineMark
}

// timelineMark is a DNS event on a strip: the address appeared or left.
type timelineMark struct {
	X, TextX, Text, Title string
}

const (
	stripH     = 24.0
	stripGap   = 12.0
	headerH    = 22.0
	maxColumns = 150 // at most this many columns per strip; intervals merge to fit
)

// columnsOf merges buckets into at most maxColumns columns, per to a column.
func columnsOf(buckets int) (per, cols int) {
	per = (buckets + maxColumns - 1) / maxColumns
	return per, (buckets + per - 1) / per
}

func newTimelineChart(v *View) *timelineChart {
	tl := v.Timeline
	if tl.Buckets == 0 || tl.Step <= 0 {
		return nil
	}
	per, cols := columnsOf(tl.Buckets)
	colW := plotW / float64(cols)
	step := tl.Step * float64(per) // seconds per column
	span := step * float64(cols)
	from := tl.From.UTC()
	at := func(c int) time.Time { return from.Add(report.SecondsDuration(step * float64(c))) }
	gap := colGap(colW)
	c := &timelineChart{chart: chart{ID: "timeline-chart", Key: "timeline", Title: "Failure ratio over time, per endpoint"}}
	c.Legend = []legendItem{
		{Class: "sent", Text: "requests sent, none failed"},
		{Class: "fail", Text: "share that failed (full height: all)"},
		{Class: "empty", Text: "blank: nothing sent"},
	}
	if layoutLegend(plotX0, 12, c.Legend) > 12 {
		layoutLegend(0, 12, c.Legend) // on one line, over the labels too
	}
	y := 34.0
	failing := 0
	for i, s := range tl.Series {
		if v.MultiURL && (i == 0 || tl.Series[i-1].Target != s.Target) {
			y += 6
			c.Rows = append(c.Rows, timelineRow{chartRow: chartRow{Header: true, Y: f(y + 10), Label: s.Target}})
			y += headerH
		}
		full := s.Full
		row := timelineRow{chartRow: chartRow{Y: f(y), Label: chartLabel(s.Label), Full: full, Failing: s.Failing, Suspect: s.Suspect,
			Figure: fmt.Sprintf("%d of %d failed", s.TotalFail, s.TotalN)}}
		if s.Failing {
			failing++
		}
		row.Title = full + ": " + row.Figure
		var sent strings.Builder
		run := -1 // first column of the current run of columns with requests
		for col := 0; col <= cols; col++ {
			var n, k int64
			for j := col * per; col < cols && j < min((col+1)*per, len(s.Requests)); j++ {
				n += s.Requests[j]
				k += s.Failed[j]
			}
			if n > 0 && run < 0 {
				run = col
			}
			if n == 0 && run >= 0 {
				fmt.Fprintf(&sent, "M%s 0h%sv%sh-%sz", f(plotX0+float64(run)*colW), f(float64(col-run)*colW), f(stripH), f(float64(col-run)*colW))
				run = -1
			}
			if k == 0 {
				continue
			}
			h := max(stripH*float64(k)/float64(n), 2) // any failure shows
			row.Fails = append(row.Fails, svgRect{
				X: f(plotX0 + float64(col)*colW + gap/2), Y: f(stripH - h), W: f(colW - gap), H: f(h),
				Title: fmt.Sprintf("%s, %s–%s UTC: %d of %d failed (%s)", full, clockOf(at(col), step), clockOf(at(col+1), step),
					k, n, words.PctRate(float64(k)/float64(n))),
			})
		}
		row.Sent = sent.String()
		x := func(t report.Time) float64 { return plotX0 + t.Sub(from).Seconds()/span*plotW }
		for _, m := range []struct {
			at         *report.Time
			text, then string
		}{{s.Added, "appeared in DNS", ""}, {s.Removed, "left DNS", ", not probed after"}} {
			if m.at != nil {
				row.Marks = append(row.Marks, timelineMark{X: f(x(*m.at)), TextX: f(x(*m.at) + 3), Text: m.text,
					Title: m.text + " at " + words.Clock(m.at.Time) + " UTC" + m.then})
			}
		}
		c.Rows = append(c.Rows, row)
		y += stripH + stripGap
	}
	c.Axis = plotAxis(y, timeTicks(from, span, plotX0, plotW, 8), template.HTML("time (UTC) · one column per "+durationWords(step)))
	c.Height = f(y + 44)
	c.Desc = fmt.Sprintf("One strip per endpoint from %s to %s UTC, one column per %s; a column's height is the share of its requests that failed. %d of %d endpoints had failures.",
		words.Clock(from), words.Clock(from.Add(report.SecondsDuration(span))), durationWords(step), failing, len(tl.Series))
	return c
}

// clockOf is a time of day to the second, or to the millisecond when the
// columns are not whole seconds.
func clockOf(t time.Time, step float64) string {
	if step != math.Trunc(step) || t.Nanosecond() != 0 {
		return t.UTC().Format("15:04:05.000")
	}
	return t.UTC().Format("15:04:05")
}

// durationWords says a number of seconds briefly: "250 ms", "1 s", "2 min".
func durationWords(s float64) string {
	switch {
	case s < 1:
		return strconv.FormatFloat(s*1000, 'g', 3, 64) + " ms"
	case s < 120 || math.Mod(s, 60) != 0:
		return strconv.FormatFloat(s, 'g', 4, 64) + " s"
	}
	return strconv.FormatFloat(s/60, 'g', 4, 64) + " min"
}

// tickSteps are the time-axis steps, in seconds.
var tickSteps = []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400}

// timeTicks labels a time axis from x0, w wide, at round clock times, at
// most most of them.
func timeTicks(from time.Time, span, x0, w float64, most int) []xTick {
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s <= float64(most) {
			step = s
			break
		}
	}
	d := report.SecondsDuration(step)
	t := from.Truncate(d)
	if t.Before(from) {
		t = t.Add(d)
	}
	end := from.Add(report.SecondsDuration(span))
	layout := "15:04:05"
	switch {
	case step < 1:
		layout = "15:04:05.0"
	case step >= 60:
		layout = "15:04"
	}
	var ticks []xTick
	for ; !t.After(end); t = t.Add(d) {
		ticks = append(ticks, xTick{X: f(x0 + t.Sub(from).Seconds()/span*w), Label: t.UTC().Format(layout)})
	}
	return ticks
}

// mixChart is each family's answers as one stacked bar: statuses and error
// classes, their share of the family's requests.
type mixChart struct {
	chart
	Bars []mixBar
}

// mixBar is one family's bar.
type mixBar struct {
	chartRow
	Segs []mixSeg
}

// mixSeg is one status or error class within a bar.
type mixSeg struct {
	X, W, Fill, TextX, Label, Title string
	Hatch, Dark                     bool // Dark: the label is drawn in black
}

// answerKind sorts and colours an answer: statuses that are not failures,
// statuses that are, then errors without an HTTP response.
type answerKind int

const (
	answerOK answerKind = iota
	answerFailStatus
	answerError
)

// answerColours per kind, taken in order and reused past the end; errors are
// hatched as well, so they differ from failing statuses in grey print too.
var answerColours = [][]string{
	answerOK:         {"#0072B2", "#56B4E9", "#009E73", "#7FB6D5"},
	answerFailStatus: {colourFail, "#E69F00", "#F0E442", "#8E3E00"},
	answerError:      {"#CC79A7", "#882255", "#AA4499", "#DDA0C8"},
}

// darkText marks the colours a black label reads best on.
var darkText = map[string]bool{"#56B4E9": true, "#E69F00": true, "#F0E442": true, "#7FB6D5": true, "#CC79A7": true, "#DDA0C8": true, "#009E73": true}

type answerKey struct {
	key  string
	kind answerKind
	code int
}

func newMixChart(v *View) *mixChart {
	fams := v.Families[:max(len(v.Families)-1, 0)] // not the total
	order := answerOrder(fams, report.FailStatusOf(v.r))
	if len(order) == 0 {
		return nil
	}
	fill := map[string]string{}
	used := map[answerKind]int{}
	var legend []legendItem
	for _, k := range order {
		pal := answerColours[k.kind]
		fill[k.key] = pal[used[k.kind]%len(pal)]
		used[k.kind]++
		text := k.key
		switch k.kind {
		case answerFailStatus:
			text += " (failure)"
		case answerError:
			text += " (no HTTP response)"
		}
		legend = append(legend, legendItem{Fill: fill[k.key], Hatch: k.kind == answerError, Text: text})
	}
	c := &mixChart{chart: chart{ID: "mix-chart", Key: "mix", Title: "Answers per address family", LegendBelow: true}}
	y := 10.0
	for _, row := range fams {
		if row.Stats.Requests == 0 {
			continue
		}
		c.Bars = append(c.Bars, mixBarOf(row, y, order, fill))
		y += stripH + stripGap
	}
	if len(c.Bars) == 0 {
		return nil
	}
	c.Axis = plotAxis(y, pctTicks(), "share of the family's requests")
	// The legend goes under the axis.
	c.Legend = legend
	c.Height = f(layoutLegend(plotX0, y+60, legend) + 14)
	var parts []string
	for _, b := range c.Bars {
		parts = append(parts, b.Title)
	}
	c.Desc = "Share of each address family's requests by status and error class. " + strings.Join(parts, "; ") + "."
	return c
}

// answerOrder is every answer of the families, in the order the chart
// stacks and colours them: successes, failing statuses, then errors, each
// by code, then name.
func answerOrder(fams []StatsRow, fail report.FailStatus) []answerKey {
	keys := map[string]answerKey{}
	for _, row := range fams {
		s := row.Stats
		for k := range s.Status {
			code, _ := strconv.Atoi(k)
			kind := answerOK
			if fail.Fails(code) {
				kind = answerFailStatus
			}
			keys[k] = answerKey{k, kind, code}
		}
		for k := range s.Errors {
			keys[k] = answerKey{k, answerError, 0}
		}
	}
	order := make([]answerKey, 0, len(keys))
	for _, k := range keys {
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.code != b.code {
			return a.code < b.code
		}
		return a.key < b.key
	})
	return order
}

// mixBarOf is a family's bar at y: a segment per answer, as wide as its
// share, labelled where the label fits.
func mixBarOf(row StatsRow, y float64, order []answerKey, fill map[string]string) mixBar {
	s := row.Stats
	b := mixBar{chartRow: chartRow{Y: f(y), Label: row.Label, Failing: row.Failing,
		Figure: fmt.Sprintf("%d of %d failed", s.Failed, s.Requests)}}
	b.Title = row.Label + ": " + strings.ReplaceAll(row.Answers, "×", " ×")
	x := plotX0
	for _, k := range order {
		n := s.Status[k.key]
		if k.kind == answerError {
			n = s.Errors[k.key]
		}
		if n == 0 {
			continue
		}
		w := float64(n) / float64(s.Requests) * plotW
		seg := mixSeg{X: f(x), W: f(w), Fill: fill[k.key], Hatch: k.kind == answerError, Dark: darkText[fill[k.key]],
			Title: fmt.Sprintf("%s: %s ×%d of %d requests (%s)", row.Label, k.key, n, s.Requests, words.PctRate(float64(n)/float64(s.Requests)))}
		label := k.key + " ×" + strconv.FormatInt(n, 10)
		if float64(runes(label))*7+10 <= w {
			seg.Label, seg.TextX = label, f(x+w/2)
		} else if float64(runes(k.key))*7+6 <= w {
			seg.Label, seg.TextX = k.key, f(x+w/2)
		}
		b.Segs = append(b.Segs, seg)
		x += w
	}
	return b
}

// latencyChart is each endpoint's latency percentiles on one axis, log
// scaled when they span more than a factor of 20.
type latencyChart struct {
	chart
	Rows []latencyRow
}

// latencyRow is one endpoint's p50, p90, p99 and max, or a URL heading.
type latencyRow struct {
	chartRow
	None           bool
	X50, XMax, T50 string // the p50's place and tooltip, the max's place
	Marks          []latencyMark
}

// latencyMark is a percentile's marker on a row, with its tooltip.
type latencyMark struct{ Class, D, Title string }

// marker is the path of a percentile's marker at x, y: the p90 diamond,
// the p99 triangle, the max cross; "" for the others.
func marker(class string, x, y float64) string {
	switch class {
	case "p90":
		return fmt.Sprintf("M%s %sl5.5 5.5l-5.5 5.5l-5.5-5.5z", f(x), f(y-5.5))
	case "p99":
		return fmt.Sprintf("M%s %sl6 10.4h-12z", f(x), f(y-6))
	case "max":
		return fmt.Sprintf("M%s %sl9 9m0-9l-9 9", f(x-4.5), f(y-4.5))
	}
	return ""
}

func newLatencyChart(v *View) *latencyChart {
	lo, hi := math.Inf(1), 0.0
	for _, tv := range v.Targets {
		for _, row := range tv.Rows {
			if e := row.Stats; e != nil && e.Requests > 0 {
				l := e.LatencyMS
				lo = min(lo, l.P50, l.P90, l.P99, l.Max)
				hi = max(hi, l.P50, l.P90, l.P99, l.Max)
			}
		}
	}
	if hi <= 0 {
		return nil
	}
	at, ticks, log := msScale(lo, hi, 5)
	scale := func(ms float64) float64 { return plotX0 + at(ms)*plotW }
	c := &latencyChart{chart: chart{ID: "latency-chart", Key: "latency", Title: "Latency percentiles per endpoint"}}
	var title template.HTML = "latency"
	if log {
		c.Title, title = c.Title+" (log scale)", "latency, log scale"
	}
	var xt []xTick
	for _, t := range ticks {
		xt = append(xt, xTick{X: f(scale(t)), Label: msWords(t)})
	}
	c.Legend = []legendItem{
		{Class: "p50", Text: "p50 (median)"}, {Class: "p90", Text: "p90"}, {Class: "p99", Text: "p99"},
		{Class: "max", Text: "max"}, {Class: "range", Text: "line: p50 to max"},
	}
	layoutLegend(plotX0, 12, c.Legend)
	y := 34.0
	const rowH = 26.0
	var parts []string
	for _, tv := range v.Targets {
		if v.MultiURL {
			y += 6
			c.Rows = append(c.Rows, latencyRow{chartRow: chartRow{Header: true, Y: f(y + 10), Label: tv.Target}})
			y += headerH
		}
		for _, row := range tv.Rows {
			full := v.named(row.Label, tv.Target)
			lr := latencyRow{chartRow: chartRow{Y: f(y), Label: chartLabel(row.Label), Full: full, Failing: row.Failing, Suspect: row.Suspect}}
			e := row.Stats
			if e == nil || e.Requests == 0 {
				lr.None, lr.Figure = true, "no requests"
			} else {
				l := e.LatencyMS
				lr.X50, lr.XMax, lr.T50 = f(scale(l.P50)), f(scale(l.Max)), full+" p50 "+words.Latency(l.P50, e.Requests)
				for _, m := range []struct {
					class string
					ms    float64
				}{{"max", l.Max}, {"p99", l.P99}, {"p90", l.P90}} {
					lr.Marks = append(lr.Marks, latencyMark{m.class, marker(m.class, scale(m.ms), rowH/2), full + " " + m.class + " " + words.Latency(m.ms, e.Requests)})
				}
				lr.Figure = "p50 " + row.P50 + " · p99 " + row.P99
				lr.Title = fmt.Sprintf("%s: p50 %s, p90 %s, p99 %s, max %s over %d requests", full, row.P50,
					words.Latency(l.P90, e.Requests), row.P99, row.Max, e.Requests)
				parts = append(parts, lr.Title)
			}
			c.Rows = append(c.Rows, lr)
			y += rowH
		}
	}
	c.Axis = plotAxis(y+4, xt, title)
	c.Axis.GridTop = f(30)
	c.Height = f(y + 48)
	c.Desc = "Latency percentiles per endpoint (" + string(title) + "). " + strings.Join(parts, "; ") + "."
	return c
}

// msScale places milliseconds from lo to hi on 0 to 1, with its ticks:
// linear from 0 to a round top in about n steps, or log scaled when they
// span more than a factor of 20.
func msScale(lo, hi, n float64) (at func(float64) float64, ticks []float64, log bool) {
	lo = max(lo, 0.001)
	if hi/lo <= 20 {
		step := niceCeil(hi / n)
		top := math.Ceil(hi/step-1e-9) * step
		for t := 0.0; t <= top+step/2; t += step {
			ticks = append(ticks, t)
		}
		return func(ms float64) float64 { return ms / top }, ticks, false
	}
	ticks = logTicks(lo, hi)
	t0 := ticks[0]
	a, b := math.Log10(t0), math.Log10(ticks[len(ticks)-1])
	return func(ms float64) float64 { return (math.Log10(max(ms, t0)) - a) / (b - a) }, ticks, true
}

// niceCeil is the smallest of 1, 2 or 5 × 10^k at least x.
func niceCeil(x float64) float64 { return ceilOf(x, 1, 2, 5) }

// ceilOf is the smallest of steps × 10^k at least x; 1 when x ≤ 0.
func ceilOf(x float64, steps ...float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range steps {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// niceFloor is the largest of 1, 2 or 5 × 10^k at most x.
func niceFloor(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= x*(1+1e-9) {
			return m * p
		}
	}
	return p
}

// logTicks are the 1-2-5 values from below lo to above hi (each the next
// after half as much again), or the powers of ten alone when those would
// be more than ten.
func logTicks(lo, hi float64) []float64 {
	var ticks []float64
	for t := niceFloor(lo); t <= niceCeil(hi)*(1+1e-9); t = niceCeil(t * 1.5) {
		ticks = append(ticks, t)
	}
	if len(ticks) <= 10 {
		return ticks
	}
	a, b := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	ticks = ticks[:0]
	for e := a; e <= b; e++ {
		ticks = append(ticks, math.Pow(10, e))
	}
	return slices.Compact(ticks)
}

// msWords labels a latency tick: "0.5 ms", "20 ms", "1.5 s".
func msWords(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'g', 3, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'g', 3, 64) + " ms"
}

// rateChart is the failure ratio of each value of one instance header, with
// its Wilson 95% interval: one row per instance, so one failing instance
// among healthy ones stands out.
type rateChart struct {
	chart
	Rows []rateRow
}

// rateRow is one instance: its failure ratio as a bar (W wide), and its
// interval from Lo to Hi.
type rateRow struct {
	chartRow
	W, Lo, Hi string
}

// newRateChart draws the failure ratios of g, the i-th table of instances;
// nil when no value carried a request.
func newRateChart(i int, g GroupTable) *rateChart {
	id := fmt.Sprintf("instances-chart-%d", i+1)
	c := &rateChart{chart{ID: id, Key: id, Class: "instances", Title: "Failure ratio per value of " + g.Header}, nil}
	const rowH = 26.0
	y := 10.0
	var parts []string
	for _, row := range g.Rows {
		s := row.Stats
		if s == nil || s.Requests == 0 {
			continue
		}
		lo, hi := failureCI(s.Failed, s.Requests)
		rate := float64(s.Failed) / float64(s.Requests)
		w := rate * plotW
		if s.Failed > 0 {
			w = max(w, 2) // any failure shows
		}
		rr := rateRow{chartRow: chartRow{Y: f(y), Label: chartLabel(row.Label), Full: g.Header + ": " + row.Label, Failing: row.Failing, Suspect: row.Suspect,
			Figure: fmt.Sprintf("%d of %d failed", s.Failed, s.Requests)}, W: f(w), Lo: f(plotX0 + lo*plotW), Hi: f(plotX0 + hi*plotW)}
		rr.Title = fmt.Sprintf("%s: %d of %d responses failed (%s, 95%% CI %s)", rr.Full, s.Failed, s.Requests, words.PctRate(rate), words.CIRange(lo, hi))
		if row.Suspect {
			rr.Title += ", named by the verdict"
		}
		parts = append(parts, rr.Title)
		c.Rows = append(c.Rows, rr)
		y += rowH
	}
	if len(c.Rows) == 0 {
		return nil
	}
	c.Axis = plotAxis(y+4, pctTicks(), "share of the instance's responses that failed · the whisker is its 95% interval")
	c.Axis.GridTop = "4"
	c.Height = f(y + 48)
	c.Desc = "Failure ratio of the responses per value of " + g.Header + ", with its 95% interval. " + strings.Join(parts, "; ") + "."
	return c
}
