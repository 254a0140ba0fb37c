package render

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/words"
)

// CompareRenderer writes a comparison in one format.
type CompareRenderer func(io.Writer, *compare.Comparison) error

// CompareForFormat returns the comparison renderer of a --format value
// (text, json, markdown or html); o.Brief makes all but JSON one screen
// long.
func CompareForFormat(name string, o Options) (CompareRenderer, error) {
	return forFormat(name, o, func(c *compare.Comparison) *Page { return comparePage(c, o.Brief) }, compare.JSON)
}

// cmpMethod says how the comparison was decided.
func cmpMethod(c *compare.Comparison) string {
	return fmt.Sprintf("Failure rates are compared with Fisher's exact test: worse and better are one-sided (P is the p of the change named, else two-sided), and each status or error class's share of the answers is compared two-sided. "+
		"Latency is compared at the median by Mann-Whitney and at the 99th percentile by Fisher's exact test of the requests at or above the 99th percentile of both runs together, each one-sided both ways; "+
		"a percentile is slower or faster when its test is significant and it moved by more than %s (--max-latency-increase %s), and latency is not compared where the failure rates differ by 10 points or more. "+
		"α = %s over all %d comparison%s (Bonferroni): each needs p < %s. A new endpoint is compared with its URL's endpoints before. Failure-rate intervals are Wilson 95%%, those of p50 and p99 95%% from binomial order statistics; latencies come from each report's histograms.",
		c.MaxLatencyIncrease.Words(), c.MaxLatencyIncrease, words.Num(c.Alpha), c.Comparisons, words.Plural(c.Comparisons), words.AlphaValue(c.AlphaEach))
}

// cmpRowOf is one scope as a row of cmpTable: label, each side's count and
// rate, then count and interval, the change, its p, p50 and p99.
func cmpRowOf(sc *compare.ScopeChange, label string) Row {
	side := func(s *compare.Side) []string {
		if s == nil {
			return []string{"-", "", "-"}
		}
		count := fmt.Sprintf("%d/%d", s.Failed, s.Requests)
		return []string{count, pct(s.FailureRate, s.Requests), count + " " + rateCI(s.Failed, s.Requests, s.FailureRate)}
	}
	b, a := side(sc.Before), side(sc.After)
	var p string
	lat := sc.Latency.Change
	switch {
	case sc.Change == compare.ChangeWorse:
		p = pCell(sc.PWorse)
	case sc.Change == compare.ChangeBetter:
		p = pCell(sc.PBetter)
	case lat != compare.LatencySame:
		p = pCell(latencyP(&sc.Latency, lat))
	case sc.Tested && sc.Baseline == nil:
		p = pCell(sc.P)
	}
	change := sc.Change
	also := func(what string) {
		if change == compare.ChangeSame || change == compare.ChangeAdded && what == lat {
			change = what
		} else {
			change += ", " + what
		}
	}
	if lat != compare.LatencySame {
		also(lat)
	}
	// New kinds of failure no test found significant are said beside
	// what else changed, never hidden by it.
	if n, kinds := sc.NewFailures(); n > 0 && sc.Change != compare.ChangeWorse {
		also("new " + cmp.Or(strings.Join(kinds, ", "), "failures"))
	}
	if sc.Baseline != nil && (sc.Change == compare.ChangeWorse || lat != compare.LatencySame) {
		change += " (new)"
	}
	bs, as := cmp.Or(sc.Before, &compare.Side{}), cmp.Or(sc.After, &compare.Side{})
	latency := func(b, a float64) string { // "0.52→0.55ms", "-→0.55ms"
		if bs.Requests == 0 && as.Requests == 0 {
			return "-"
		}
		return unitOnce(words.Latency(b, bs.Requests), "→", words.Latency(a, as.Requests))
	}
	return Row{Failing: sc.Change == compare.ChangeWorse || lat == compare.LatencySlower, Cells: []string{
		label, b[0], b[1], a[0], a[1], b[2], a[2], change, p,
		latency(bs.P50MS, as.P50MS), latency(bs.P99MS, as.P99MS),
	}}
}

// latencyP is the p of a latency change named (slower or faster): the
// least of the percentiles that changed so.
func latencyP(l *compare.LatencyChange, change string) float64 {
	p := 1.0
	for _, q := range []*compare.QuantileChange{&l.P50, &l.P99} {
		if q.Change == change {
			p = min(p, map[bool]float64{true: q.PFaster, false: q.PSlower}[change == compare.LatencyFaster])
		}
	}
	return p
}

// latencyBlocks are both percentiles of every scope whose latency
// changed (its endpoints, instances, families and total): a line each on
// a terminal, a table in the documents; nil when none changed.
func latencyBlocks(c *compare.Comparison) []Block {
	tb := Table{Only: documents, Marks: true, Cols: []Col{
		{Head: "Scope", Label: true}, {Head: "Percentile"}, {Head: "Before", Right: true}, {Head: "After", Right: true},
		{Head: "Change", Right: true}, {Head: "Tolerance", Right: true}, {Head: "p"}, {},
	}}
	scopes := c.Scopes()
	// Endpoints and instances first, then the families and the total.
	scopes = append(scopes[1+len(c.Families):], scopes[:1+len(c.Families)]...)
	for _, sc := range scopes {
		if sc.Latency.Change == compare.LatencySame {
			continue
		}
		base, scope := cmp.Or(sc.Baseline, sc.Before), c.Label(sc)
		if sc.Baseline != nil {
			scope += " (new, against " + sc.BaselineScope + ")"
		}
		for _, name := range []string{"p50", "p99"} {
			q, at := &sc.Latency.P50, func(s *compare.Side) (float64, *[2]float64) { return s.P50MS, s.P50CI95MS }
			if name == "p99" {
				q, at = &sc.Latency.P99, func(s *compare.Side) (float64, *[2]float64) { return s.P99MS, s.P99CI95MS }
			}
			side := func(s *compare.Side) string {
				ms, ci := at(s)
				if ci == nil {
					return words.Latency(ms, s.Requests)
				}
				return words.Latency(ms, s.Requests) + " (95% CI " + strings.TrimSuffix(words.Latency(ci[0], 1), "ms") + "–" + words.Latency(ci[1], 1) + ")"
			}
			sign, p := "+", q.PSlower
			if q.ChangeMS < 0 {
				sign = "-"
			}
			if q.Change == compare.LatencyFaster || q.Change == compare.LatencySame && q.ChangeMS < 0 {
				p = q.PFaster
			}
			tb.Rows = append(tb.Rows, Row{Failing: q.Change == compare.LatencySlower, Cells: []string{scope, name, side(base), side(sc.After),
				sign + words.Latency(math.Abs(q.ChangeMS), 1), words.Latency(q.ToleranceMS, 1), words.PValue(p), quantileWords(sc, q, base, c.AlphaEach)}})
		}
	}
	if len(tb.Rows) == 0 {
		return nil
	}
	l := lines(tb.Rows, func(c []string) string {
		return fmt.Sprintf("%s: %s %s → %s, %s (tolerance %s), %s: %s", c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7])
	})
	l.Only = FormatText
	return []Block{l, tb}
}

// quantileWords says how a percentile of sc changed against base, or why
// it is the same: "within the tolerance", "cannot tell with 150 and 150
// requests: no p below 0.12 is possible, …".
func quantileWords(sc *compare.ScopeChange, q *compare.QuantileChange, base *compare.Side, alphaEach float64) string {
	switch {
	case q.Change != compare.LatencySame:
		return q.Change
	case math.Abs(q.ChangeMS) <= q.ToleranceMS:
		return "within the tolerance"
	case !sc.Latency.CannotTell(q, alphaEach):
		return "not significant"
	}
	s := fmt.Sprintf("cannot tell with %d and %d requests: no p below %s is possible, and a change needs one below %s",
		base.Requests, sc.After.Requests, pCell(q.MinP), words.AlphaValue(alphaEach))
	if q.RequestsToTell > 0 {
		s += fmt.Sprintf(" (about %d requests a side would do)", q.RequestsToTell)
	}
	return s
}

// lines is a list of a line of each row, line says its cells.
func lines(rows []Row, line func(cells []string) string) List {
	var l List
	for _, r := range rows {
		l.Items = append(l.Items, Item{Failing: r.Failing, Text: line(r.Cells)})
	}
	return l
}

// pCell is a p-value for a table cell: "<1e-9", "3.2e-05", "0.41".
func pCell(p float64) string {
	return strings.TrimPrefix(strings.TrimPrefix(words.PValue(p), "p="), "p")
}

// answerRows are the answers that appeared, vanished or changed share
// significantly (grew: failures that appeared or grew) of each endpoint,
// and of a family or the total where no endpoint shows the same change.
func answerRows(c *compare.Comparison, grew bool) []Row {
	var out []Row
	shown := map[string]bool{} // family + answer + change, shown for an endpoint
	add := func(sc *compare.ScopeChange, label string, endpoint bool) {
		for _, a := range sc.Answers {
			if a.Change == "same" || (!endpoint && !a.Significant) {
				continue
			}
			if !endpoint && (shown[sc.Family+" "+a.Answer+" "+a.Change] || sc.Family == "" && shown[a.Answer+" "+a.Change]) {
				continue
			}
			if endpoint {
				shown[sc.Family+" "+a.Answer+" "+a.Change] = true
				shown[a.Answer+" "+a.Change] = true
			}
			failure := a.Failure && (a.Change == "appeared" || a.Change == "more")
			if grew && !failure {
				continue
			}
			p := ""
			if a.Tested {
				p = words.PValue(a.P)
			}
			out = append(out, Row{Failing: failure && a.Significant, Cells: []string{label, a.Answer, a.Change,
				fmt.Sprintf("%d of %d (%s)", a.Before, sc.Before.Requests, pct(a.BeforeShare, sc.Before.Requests)),
				fmt.Sprintf("%d of %d (%s)", a.After, sc.After.Requests, pct(a.AfterShare, sc.After.Requests)), p}})
		}
	}
	for i := range c.Endpoints {
		add(&c.Endpoints[i], c.Label(&c.Endpoints[i]), true)
	}
	for i := range c.Families {
		add(&c.Families[i], words.FamilyName(c.Families[i].Family), false)
	}
	add(&c.Totals, "total", false)
	return out
}

// answerList is a line of each answer row.
func answerList(rows []Row) List {
	return lines(rows, func(c []string) string {
		if c[5] == "" {
			return fmt.Sprintf("%s: %s %s: %s → %s", c[0], c[1], c[2], c[3], c[4])
		}
		return fmt.Sprintf("%s: %s %s: %s → %s, %s", c[0], c[1], c[2], c[3], c[4], c[5])
	})
}

// runWords describes one compared report: "old.json · 2026-06-16 20:43:00 –
// 20:43:30 UTC · 900 requests, 300 failed (33.3%) · verdict concentrated".
func runWords(s *compare.RunSide) string {
	var parts []string
	if s.File != "" {
		parts = append(parts, words.SafeText(s.File, false))
	}
	if !s.StartedAt.IsZero() {
		parts = append(parts, stamp(s.StartedAt.Time)+" – "+clock(s.EndedAt.Time)+" UTC")
	}
	parts = append(parts, fmt.Sprintf("%d request%s, %d failed (%s)", s.Requests, words.Plural(int(s.Requests)), s.Failed, pct(s.FailureRate, s.Requests)))
	if s.Inputs > 0 {
		parts = append(parts, fmt.Sprintf("merged from %d reports", s.Inputs))
	}
	if s.Interrupted {
		parts = append(parts, "interrupted")
	}
	parts = append(parts, "verdict "+cmp.Or(s.Verdict, "none"))
	return strings.Join(parts, " · ")
}
