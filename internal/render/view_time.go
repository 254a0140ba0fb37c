package render

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// OverTimeView is the run over time, per family and per suspect, in the
// timeline's buckets merged into columns as its chart's (columnsOf).
type OverTimeView struct {
	From, To report.Time // To: the run's end
	Step     float64     // seconds per slice
	Columns  int
	Scopes   []TimeScope
	Note     string // which scopes kept no latencies over time; ""
}

// TimeScope is one family or suspect over time.
type TimeScope struct {
	// Kind is "family", "address", "instance" or "connections"; What says
	// it for a reader; Label names it: "IPv4 (127.0.0.1, 127.0.0.2)".
	Kind, What, Label string
	Tag               string // what the verdict named in it: "suspect", "failing connections"; ""
	Suspect, Failing  bool
	// Per slice: requests sent, those that failed, and their p50 and p99
	// latencies in milliseconds (0 where no request was sent, or without
	// Latency, when none was kept over time).
	Requests, Failed []int64
	P50, P99         []float64
	Latency          bool
	// Summary says when it failed and how slow it got: "failed from
	// 20:43:05 to 20:43:09 UTC, in 4 of 5 slices; p99 highest at …".
	Summary string
}

// At is when slice i starts.
func (o *OverTimeView) At(i int) time.Time {
	return o.From.Add(report.SecondsDuration(o.Step * float64(i)))
}

// Clock says when slice i starts, rounded to the second when slices are
// whole seconds, never after the run's end as the text says it.
func (o *OverTimeView) Clock(i int) string {
	at := o.At(i)
	if !o.To.IsZero() && at.After(o.To.Time) {
		at = o.To.Time
	}
	if o.Step >= 1 && o.Step == math.Trunc(o.Step) {
		if r := at.Round(time.Second); o.To.IsZero() || !r.After(o.To.Time) {
			at = r
		}
		return clock(at)
	}
	return clockOf(at, o.Step)
}

// epKey names the data an endpoint's scope is drawn from, so a suspect
// that is its family's only endpoint is drawn once.
func epKey(target, addr string) string { return "endpoint\x00" + target + "\x00" + addr }

// overTime prepares the families and the suspects over time; see
// OverTimeView.
func (v *View) overTime(r *report.Report) {
	tl, buckets := &r.Timeline, v.Timeline.Buckets
	if buckets == 0 || tl.IntervalS <= 0 || len(tl.Series) != len(r.Endpoints) {
		return
	}
	per, cols := columnsOf(buckets)
	o := &v.OverTime
	*o = OverTimeView{From: tl.Start, To: r.EndedAt, Step: tl.IntervalS * float64(per), Columns: cols}
	b := &timeBuilder{r: r, o: o, buckets: buckets, per: per, cols: cols, at: map[string]int{}, groups: map[string]*report.GroupSeries{}}
	b.families(v)
	for i := range tl.Groups {
		g := &tl.Groups[i]
		b.groups[g.Header+": "+g.Value] = g
	}
	for i, sr := range v.Verdict.Suspects {
		s := &r.Verdict.Suspects[i]
		b.suspect(s, s.Kind, sr.What, sr.Label, sr.URL)
		if s.Kind == report.SuspectGroup && failingConns(s) {
			// The instance's evidence, its address's failing connections:
			// the address over time.
			b.suspect(s, report.SuspectConnections, "connections", "connections of "+s.Address, sr.URL)
		}
	}
	for i := range o.Scopes {
		s := &o.Scopes[i]
		s.Failing = slices.ContainsFunc(s.Failed, func(n int64) bool { return n > 0 })
		s.Summary = o.summary(s)
	}
	if len(tl.Families) == 0 {
		// A report written before the timeline kept latencies, or merged
		// with one: requests and failures only.
		o.Note = "This report holds no latency over time (it was written before pinprobe kept it, or merged with such a report): requests and failures only."
	} else if len(b.missing) > 0 {
		o.Note = fmt.Sprintf("No latency over time for %s: a run keeps it for every family and for its first %d endpoints and %d instances.",
			words.JoinAnd(words.CapItems(b.missing, 4)), report.MaxLatencyEndpoints, report.MaxGroupSeries)
	}
}

// timeBuilder builds an OverTimeView of cols slices of per buckets each;
// at indexes Scopes by epKey, missing the suspects without latency.
type timeBuilder struct {
	r                  *report.Report
	o                  *OverTimeView
	buckets, per, cols int
	at                 map[string]int
	groups             map[string]*report.GroupSeries
	missing            []string
}

// column sums b's buckets into the slices.
func (b *timeBuilder) column(bk []int64) []int64 {
	out := make([]int64, b.cols)
	for i, n := range bk {
		out[i/b.per] += n
	}
	return out
}

// quantiles reads each slice's p50 and p99 from l, none above most (the
// scope's own maximum, exact, when it is known: a slice's bin is read at
// its middle, which can lie above every latency of the bin; 0: none).
func (b *timeBuilder) quantiles(s *TimeScope, l *report.Latencies, most float64) {
	if l == nil || l.Buckets() != b.buckets {
		return
	}
	s.Latency = true
	s.P50, s.P99 = make([]float64, b.cols), make([]float64, b.cols)
	for c := range b.cols {
		var bins report.BinCounts
		var n int64
		for i := c * b.per; i < min((c+1)*b.per, b.buckets); i++ {
			bins.Add(l, i)
			n += l.Total(i)
		}
		s.P50[c], s.P99[c] = bins.Quantile(n, 0.5), bins.Quantile(n, 0.99)
		if most > 0 {
			s.P50[c], s.P99[c] = min(s.P50[c], most), min(s.P99[c], most)
		}
	}
}

// families adds a scope for each family, its endpoints' series summed.
func (b *timeBuilder) families(v *View) {
	r, tl := b.r, &b.r.Timeline
	famLat := map[string]*report.Latencies{}
	for i := range tl.Families {
		famLat[tl.Families[i].Family] = &tl.Families[i].Latency
	}
	for _, fam := range words.SortedKeys(r.Families) {
		var idx []int
		for i := range r.Endpoints {
			if r.Endpoints[i].Family == fam {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		s := TimeScope{Kind: "family", What: "family", Requests: make([]int64, b.cols), Failed: make([]int64, b.cols)}
		var labels []string
		for _, i := range idx {
			labels = append(labels, v.Label(&r.Endpoints[i]))
			req, failed := b.column(tl.Series[i].Requests), b.column(tl.Series[i].Failed)
			for c := range b.cols {
				s.Requests[c] += req[c]
				s.Failed[c] += failed[c]
			}
		}
		s.Label = words.FamilyName(fam) + " (" + strings.Join(words.CapItems(labels, 3), ", ") + ")"
		b.quantiles(&s, famLat[fam], r.Families[fam].LatencyMS.Max)
		key := "family\x00" + fam
		if len(idx) == 1 {
			e := &r.Endpoints[idx[0]]
			key = epKey(e.Target, e.Address)
		}
		b.at[key] = len(b.o.Scopes)
		b.o.Scopes = append(b.o.Scopes, s)
	}
}

// suspect draws s as kind, named label, unless a scope drawn already
// holds the same requests: that scope is then marked.
func (b *timeBuilder) suspect(s *report.Suspect, kind, what, label, url string) {
	r, tl, o := b.r, &b.r.Timeline, b.o
	tag := "suspect"
	if kind == report.SuspectConnections {
		tag = "failing connections"
	}
	var key string
	var scope TimeScope
	switch kind {
	case report.SuspectGroup:
		key = "group\x00" + s.Group
		g := b.groups[s.Group]
		if g == nil {
			b.missing = append(b.missing, label)
			return
		}
		scope = TimeScope{Requests: b.column(g.Requests), Failed: b.column(g.Failed)}
		most := 0.0
		if gr := r.FindGroup(s.Group); gr != nil {
			most = gr.LatencyMS.Max
		}
		b.quantiles(&scope, &g.Latency, most)
	default:
		key = epKey(s.Target, s.Address)
		e := slices.IndexFunc(r.Endpoints, func(e report.Endpoint) bool { return e.Target == s.Target && e.Address == s.Address })
		if e < 0 {
			return
		}
		ser := &tl.Series[e]
		scope = TimeScope{Requests: b.column(ser.Requests), Failed: b.column(ser.Failed)}
		b.quantiles(&scope, ser.Latency, r.Endpoints[e].LatencyMS.Max)
		if !scope.Latency {
			b.missing = append(b.missing, label)
		}
	}
	if j, ok := b.at[key]; ok {
		o.Scopes[j].Suspect = true
		if o.Scopes[j].Tag == "" || o.Scopes[j].Tag == "failing connections" {
			o.Scopes[j].Tag = tag
		}
		return
	}
	scope.Kind, scope.What, scope.Label, scope.Tag, scope.Suspect = what, what, label, tag, true
	if url != "" {
		scope.Label += " " + url
	}
	b.at[key] = len(o.Scopes)
	o.Scopes = append(o.Scopes, scope)
}

// summary says when s failed and when it was slowest.
func (o *OverTimeView) summary(s *TimeScope) string {
	first, last, failing, sent := -1, -1, 0, 0
	for c := range s.Requests {
		if s.Requests[c] > 0 {
			sent++
		}
		if s.Failed[c] > 0 {
			if first < 0 {
				first = c
			}
			last, failing = c, failing+1
		}
	}
	var parts []string
	switch {
	case sent == 0:
		return "no requests"
	case failing == 0:
		parts = append(parts, "no failures")
	case failing == sent:
		parts = append(parts, fmt.Sprintf("failed from %s to %s UTC, in every slice", o.Clock(first), o.Clock(last+1)))
	default:
		parts = append(parts, fmt.Sprintf("failed from %s to %s UTC, in %d of %d slices", o.Clock(first), o.Clock(last+1), failing, sent))
	}
	if s.Latency {
		peak := -1
		var p99s []float64
		for c := range s.P99 {
			if s.Requests[c] == 0 {
				continue
			}
			p99s = append(p99s, s.P99[c])
			if peak < 0 || s.P99[c] > s.P99[peak] {
				peak = c
			}
		}
		slices.Sort(p99s)
		typical := p99s[(len(p99s)-1)/2]
		if s.P99[peak] > steadyP99*typical {
			parts = append(parts, fmt.Sprintf("p99 highest at %s UTC (%s, against %s in the median slice)", o.Clock(peak), words.Latency(s.P99[peak], 1), words.Latency(typical, 1)))
		} else {
			parts = append(parts, fmt.Sprintf("p99 at most %s", words.Latency(s.P99[peak], 1)))
		}
	}
	return strings.Join(parts, "; ")
}

// steadyP99 is how many times its median a scope's highest p99 over time
// must be to be named as a peak, with when; under it only the highest is
// said.
const steadyP99 = 1.5
