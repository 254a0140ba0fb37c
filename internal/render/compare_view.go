package render

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/words"
)

// CompareRenderer writes a comparison in one format.
type CompareRenderer func(io.Writer, *compare.Comparison) error

// CompareText returns the terminal renderer of a comparison: the
// conclusion, the two runs, families and endpoints before → after, the
// statuses and errors that changed, and how it was decided.
func CompareText(o Options) CompareRenderer {
	return func(w io.Writer, c *compare.Comparison) error { return writePageText(w, comparePage(c, o.Brief), o) }
}

// CompareMarkdown writes the comparison as a Markdown document for a pull
// request, a change ticket or a release note (one screen of it with
// o.Brief).
func CompareMarkdown(o Options) CompareRenderer {
	return func(w io.Writer, c *compare.Comparison) error { return writePageMarkdown(w, comparePage(c, o.Brief)) }
}

// CompareForFormat returns the comparison renderer of a --format value
// (text, json, markdown or html); o.Brief makes all but JSON one screen
// long.
func CompareForFormat(name string, o Options) (CompareRenderer, error) {
	return forFormat(name, o, func(c *compare.Comparison) *Page { return comparePage(c, o.Brief) }, compare.JSON)
}

// cmpRow is one scope before and after, formatted.
type cmpRow struct {
	worse              bool
	label              string
	before, beforeRate string // "0/300", "0.0%"; "-" when not probed
	after, afterRate   string
	beforeCI, afterCI  string // "0.0% (0–1.3%)"
	change             string // "worse", "better", "same", "added", "removed", "worse (new)", "slower", "worse, slower", "slower, new 502"
	p                  string // the p of the change named: "<1e-9", "0.41"
	p50, p99           string // "0.52→0.55ms"
	baseline           string // for an added scope: "the endpoints of URL before: 300/900 (33.3%)"
}

// cmpAnswer is one status or error class whose share changed.
type cmpAnswer struct {
	failure bool // a failure that appeared or grew
	worse   bool // one whose test found it significant
	scope   string
	answer  string // "502", "reset"
	change  string // "appeared", "vanished", "more", "less"
	before  string // "0 of 300 (0.0%)"
	after   string
	p       string // "p<1e-9", "" when untested
}

// cmpMethod says how the comparison was decided.
func cmpMethod(c *compare.Comparison) string {
	return fmt.Sprintf("Failure rates are compared with Fisher's exact test: worse and better are one-sided (P is the p of the change named, else two-sided), and each status or error class's share of the answers is compared two-sided. "+
		"Latency is compared at the median by Mann-Whitney and at the 99th percentile by Fisher's exact test of the requests at or above the 99th percentile of both runs together, each one-sided both ways; "+
		"a percentile is slower or faster when its test is significant and it moved by more than %s (--max-latency-increase %s), and latency is not compared where the failure rates differ by 10 points or more. "+
		"α = %s over all %d comparison%s (Bonferroni): each needs p < %s. A new endpoint is compared with its URL's endpoints before. Failure-rate intervals are Wilson 95%%, those of p50 and p99 95%% from binomial order statistics; latencies come from each report's histograms.",
		c.MaxLatencyIncrease.Words(), c.MaxLatencyIncrease, words.Num(c.Alpha), c.Comparisons, words.Plural(c.Comparisons), words.AlphaValue(c.AlphaEach))
}

func cmpRowOf(sc *compare.ScopeChange, label string) cmpRow {
	row := cmpRow{label: label, change: sc.Change, worse: sc.Change == compare.ChangeWorse || sc.Latency.Change == compare.LatencySlower}
	side := func(s *compare.Side) (count, rate, ci string) {
		if s == nil {
			return "-", "", "-"
		}
		return fmt.Sprintf("%d/%d", s.Failed, s.Requests), pct(s.FailureRate, s.Requests), rateCI(s.Failed, s.Requests, s.FailureRate)
	}
	row.before, row.beforeRate, row.beforeCI = side(sc.Before)
	row.after, row.afterRate, row.afterCI = side(sc.After)
	var nb, na int64
	var b50, a50, b99, a99 float64
	if sc.Before != nil {
		nb, b50, b99 = sc.Before.Requests, sc.Before.P50MS, sc.Before.P99MS
	}
	if sc.After != nil {
		na, a50, a99 = sc.After.Requests, sc.After.P50MS, sc.After.P99MS
	}
	row.p50, row.p99 = latencyChange(b50, nb, a50, na), latencyChange(b99, nb, a99, na)
	lat := sc.Latency.Change
	switch {
	case sc.Change == compare.ChangeWorse:
		row.p = pCell(sc.PWorse)
	case sc.Change == compare.ChangeBetter:
		row.p = pCell(sc.PBetter)
	case lat != compare.LatencySame:
		row.p = pCell(latencyP(&sc.Latency, lat))
	case sc.Tested && sc.Baseline == nil:
		row.p = pCell(sc.P)
	}
	if lat != compare.LatencySame {
		if row.change == compare.ChangeSame || row.change == compare.ChangeAdded {
			row.change = lat
		} else {
			row.change += ", " + lat
		}
	}
	// New kinds of failure no test found significant are said beside
	// what else changed, never hidden by it.
	if n, kinds := sc.NewFailures(); n > 0 && sc.Change != compare.ChangeWorse {
		what := "new failures"
		if len(kinds) > 0 {
			what = "new " + strings.Join(kinds, ", ")
		}
		if row.change == compare.ChangeSame {
			row.change = what
		} else {
			row.change += ", " + what
		}
	}
	if sc.Baseline != nil {
		if sc.Change == compare.ChangeWorse || lat != compare.LatencySame {
			row.change += " (new)"
		}
		b := sc.Baseline
		row.baseline = fmt.Sprintf("%s: %d/%d (%s)", sc.BaselineScope, b.Failed, b.Requests, pct(b.FailureRate, b.Requests))
	}
	return row
}

// latencyP is the p of a latency change named (slower or faster): the
// least of the percentiles that changed so.
func latencyP(l *compare.LatencyChange, change string) float64 {
	p := 1.0
	for _, q := range []*compare.QuantileChange{&l.P50, &l.P99} {
		switch {
		case q.Change != change:
		case change == compare.LatencyFaster:
			p = min(p, q.PFaster)
		default:
			p = min(p, q.PSlower)
		}
	}
	return p
}

// latencyBlocks are both percentiles of every scope whose latency
// changed (its endpoints, instances, families and total): a line each on
// a terminal, a table in the documents; nil when none changed.
func latencyBlocks(c *compare.Comparison) []Block {
	l := List{Only: FormatText}
	tb := Table{Only: documents, Marks: true, Cols: []Col{
		{Head: "Scope", Label: true}, {Head: "Percentile"}, {Head: "Before", Right: true}, {Head: "After", Right: true},
		{Head: "Change", Right: true}, {Head: "Tolerance", Right: true}, {Head: "p"}, {},
	}}
	scopes := c.Scopes()
	// Endpoints and instances first, then the families and the total.
	scopes = append(scopes[1+len(c.Families):], scopes[:1+len(c.Families)]...)
	for _, sc := range scopes {
		lc := &sc.Latency
		if lc.Change == compare.LatencySame {
			continue
		}
		base := sc.Before
		if sc.Baseline != nil {
			base = sc.Baseline
		}
		for _, q := range []struct {
			name   string
			q      *compare.QuantileChange
			ci     func(*compare.Side) *[2]float64
			points func(*compare.Side) float64
		}{
			{"p50", &lc.P50, func(s *compare.Side) *[2]float64 { return s.P50CI95MS }, func(s *compare.Side) float64 { return s.P50MS }},
			{"p99", &lc.P99, func(s *compare.Side) *[2]float64 { return s.P99CI95MS }, func(s *compare.Side) float64 { return s.P99MS }},
		} {
			side := func(s *compare.Side) string {
				v := words.Latency(q.points(s), s.Requests)
				if ci := q.ci(s); ci != nil {
					v += " (95% CI " + strings.TrimSuffix(words.Latency(ci[0], 1), "ms") + "–" + words.Latency(ci[1], 1) + ")"
				}
				return v
			}
			scope, verdict := c.Label(sc), q.q.Change
			if sc.Baseline != nil {
				scope += " (new, against " + sc.BaselineScope + ")"
			}
			sign := "+"
			if q.q.ChangeMS < 0 {
				sign = "-"
			}
			p := q.q.PSlower
			if q.q.Change == compare.LatencyFaster || q.q.Change == compare.LatencySame && q.q.ChangeMS < 0 {
				p = q.q.PFaster
			}
			if q.q.Change == compare.LatencySame {
				switch {
				case max(q.q.ChangeMS, -q.q.ChangeMS) <= q.q.ToleranceMS:
					verdict = "within the tolerance"
				case lc.CannotTell(q.q, c.AlphaEach):
					verdict = cannotTellWords(q.q, base.Requests, sc.After.Requests, c.AlphaEach)
				default:
					verdict = "not significant"
				}
			}
			cells := []string{scope, q.name, side(base), side(sc.After), sign + words.Latency(max(q.q.ChangeMS, -q.q.ChangeMS), 1),
				words.Latency(q.q.ToleranceMS, 1), words.PValue(p), verdict}
			worse := q.q.Change == compare.LatencySlower
			l.Items = append(l.Items, Item{Failing: worse, Text: fmt.Sprintf("%s: %s %s → %s, %s (tolerance %s), %s: %s",
				cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7])})
			tb.Rows = append(tb.Rows, Row{Failing: worse, Cells: cells})
		}
	}
	if len(tb.Rows) == 0 {
		return nil
	}
	return []Block{l, tb}
}

// cannotTellWords says why a percentile's "same" says nothing: "cannot
// tell with 150 and 150 requests: no p below 0.12 is possible, and a
// change needs one below 0.000035 (about 760 requests a side would do)".
func cannotTellWords(q *compare.QuantileChange, nb, na int64, alphaEach float64) string {
	s := fmt.Sprintf("cannot tell with %d and %d requests: no p below %s is possible, and a change needs one below %s",
		nb, na, pCell(q.MinP), words.AlphaValue(alphaEach))
	if q.RequestsToTell > 0 {
		s += fmt.Sprintf(" (about %d requests a side would do)", q.RequestsToTell)
	}
	return s
}

// pCell is a p-value for a table cell: "<1e-9", "3.2e-05", "0.41".
func pCell(p float64) string {
	return strings.TrimPrefix(strings.TrimPrefix(words.PValue(p), "p="), "p")
}

// latencyChange is "0.52→0.55ms", or "-→0.55ms" for a side not probed.
func latencyChange(b float64, nb int64, a float64, na int64) string {
	if nb == 0 && na == 0 {
		return "-"
	}
	return unitOnce(words.Latency(b, nb), "→", words.Latency(a, na))
}

// answerRows lists the answers that appeared, vanished or changed share
// significantly, for each endpoint; a family's or the total's only when
// none of its endpoints shows the same change.
func answerRows(c *compare.Comparison) []cmpAnswer {
	var out []cmpAnswer
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
			row := cmpAnswer{
				failure: failure, worse: failure && a.Significant, scope: label, answer: a.Answer, change: a.Change,
				before: fmt.Sprintf("%d of %d (%s)", a.Before, sc.Before.Requests, pct(a.BeforeShare, sc.Before.Requests)),
				after:  fmt.Sprintf("%d of %d (%s)", a.After, sc.After.Requests, pct(a.AfterShare, sc.After.Requests)),
			}
			if a.Tested {
				row.p = words.PValue(a.P)
			}
			out = append(out, row)
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
