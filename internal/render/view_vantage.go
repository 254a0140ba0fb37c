package render

import (
	"cmp"
	"strconv"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// vantageOf is where a run was probed from, or the one vantage of every
// run of a merge; "" when none is named.
func vantageOf(r *report.Report) string {
	switch {
	case r.Vantage != "":
		return r.Vantage
	case len(r.Vantages) == 1 && r.Vantages[0].Name != "":
		return r.Vantages[0].Name + " (every run)"
	}
	return ""
}

// ratePct is failed of n as a percentage to a tenth, "-" when n is 0.
func ratePct(failed, n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(failed)*100/float64(n), 'f', 1, 64) + "%"
}

// vantagesSection is what the runs from each place saw (--vantage), in a
// merge of runs from several: a row per vantage, and under it a row per
// address, marked where the verdict names the address from there.
func vantagesSection(v *View) Section {
	s := Section{Heading: "By vantage point", ID: "vantages", Nav: "Vantages"}
	r := v.r
	if len(r.Vantages) < 2 {
		return s
	}
	named := map[[3]string]bool{}
	for _, t := range r.Verdict.Vantages {
		named[[3]string{t.Vantage, t.Target, t.Address}] = true
	}
	tb := Table{Marks: true, Cols: []Col{{Head: "Vantage", Label: true}, {Head: "Runs", Right: true, Prio: 2}, {Head: "Address"},
		{Head: "Family", Prio: 1}, {Head: "Requests", Right: true}, {Head: "Failed", Right: true},
		{Right: true, Only: FormatText}, {Head: "Failure rate", Right: true, Only: documents}}}
	row := func(failing bool, name, runs, label, family string, requests, failed int64) Row {
		rate := ratePct(failed, requests)
		return Row{Failing: failing, Cells: []string{name, runs, label, family,
			strconv.FormatInt(requests, 10), strconv.FormatInt(failed, 10), rate, rate}}
	}
	for _, vs := range r.Vantages {
		at := len(tb.Rows)
		tb.Rows = append(tb.Rows, row(false, cmp.Or(vs.Name, "(none)"), strconv.Itoa(vs.Runs), "all", "", vs.Requests, vs.Failed))
		for _, e := range vs.Endpoints {
			label := e.Address
			if v.MultiURL {
				label += " (" + v.short[e.Target] + ")"
			}
			failing := named[[3]string{vs.Name, e.Target, e.Address}]
			tb.Rows[at].Failing = tb.Rows[at].Failing || failing
			tb.Rows = append(tb.Rows, row(failing, "", "", label, words.FamilyName(e.Family), e.Requests, e.Failed))
		}
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: "What the runs from each place saw (--vantage); a row marked ✗ fails more from there than from the other vantages."}, tb)
	return s
}
