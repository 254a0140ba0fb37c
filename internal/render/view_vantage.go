package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// VantageRow is one vantage point of a merged report: what its runs saw,
// in total and per endpoint.
type VantageRow struct {
	// Name is the vantage's name, "(none)" for runs that named none.
	Name             string
	Runs             int
	Requests, Failed int64
	Rate             string // "15.0%"; "-" without requests
	// Families says each family's figures: "IPv4 0 of 200, IPv6 60 of 200
	// (30.0%)".
	Families  string
	Endpoints []VantageEndpointRow
	// Failing is set when the verdict names an endpoint from this vantage.
	Failing bool
}

// VantageEndpointRow is one endpoint from one vantage.
type VantageEndpointRow struct {
	Label, Family    string // Family as "IPv4", "IPv6"
	Requests, Failed int64
	Rate             string
	// Failing is set when the verdict names this endpoint from this
	// vantage: it fails more from here than from the other vantages.
	Failing bool
}

// vantages prepares the vantage of a run, or the breakdown by vantage of a
// merge of runs from several.
func (v *View) vantages(r *report.Report) {
	switch {
	case r.Vantage != "":
		v.Vantage = r.Vantage
	case len(r.Vantages) == 1 && r.Vantages[0].Name != "":
		v.Vantage = r.Vantages[0].Name + " (every run)"
	}
	if len(r.Vantages) < 2 {
		return
	}
	named := map[[3]string]bool{}
	for _, t := range r.Verdict.Vantages {
		named[[3]string{t.Vantage, t.Target, t.Address}] = true
	}
	for _, vs := range r.Vantages {
		row := VantageRow{Name: vs.Name, Runs: vs.Runs, Requests: vs.Requests, Failed: vs.Failed, Rate: ratePct(vs.Failed, vs.Requests)}
		if row.Name == "" {
			row.Name = "(none)"
		}
		var fams []string
		for _, f := range words.SortedKeys(vs.Families) {
			c := vs.Families[f]
			s := fmt.Sprintf("%s %d of %d", words.FamilyName(f), c.Failed, c.Requests)
			if c.Failed > 0 {
				s += " (" + ratePct(c.Failed, c.Requests) + ")"
			}
			fams = append(fams, s)
		}
		row.Families = strings.Join(fams, ", ")
		for _, e := range vs.Endpoints {
			label := e.Address
			if v.MultiURL {
				label += " (" + v.short[e.Target] + ")"
			}
			er := VantageEndpointRow{Label: label, Family: words.FamilyName(e.Family), Requests: e.Requests, Failed: e.Failed,
				Rate: ratePct(e.Failed, e.Requests), Failing: named[[3]string{vs.Name, e.Target, e.Address}]}
			row.Failing = row.Failing || er.Failing
			row.Endpoints = append(row.Endpoints, er)
		}
		v.Vantages = append(v.Vantages, row)
	}
}

// ratePct is failed of n as a percentage to a tenth, "-" when n is 0.
func ratePct(failed, n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(failed)*100/float64(n), 'f', 1, 64) + "%"
}

// vantagesSection is what the runs from each place saw (--vantage): a
// row per vantage, and under it a row per address.
func vantagesSection(v *View) Section {
	s := Section{Heading: "By vantage point", ID: "vantages", Nav: "Vantages"}
	if len(v.Vantages) == 0 {
		return s
	}
	tb := Table{Marks: true, Cols: []Col{{Head: "Vantage", Label: true}, {Head: "Runs", Right: true, Prio: 2}, {Head: "Address"},
		{Head: "Family", Prio: 1}, {Head: "Requests", Right: true}, {Head: "Failed", Right: true},
		{Right: true, Only: FormatText}, {Head: "Failure rate", Right: true, Only: documents}}}
	for _, vr := range v.Vantages {
		tb.Rows = append(tb.Rows, Row{Failing: vr.Failing, Cells: []string{vr.Name, strconv.Itoa(vr.Runs), "all", "",
			strconv.FormatInt(vr.Requests, 10), strconv.FormatInt(vr.Failed, 10), vr.Rate, vr.Rate}})
		for _, e := range vr.Endpoints {
			tb.Rows = append(tb.Rows, Row{Failing: e.Failing, Cells: []string{"", "", e.Label, e.Family,
				strconv.FormatInt(e.Requests, 10), strconv.FormatInt(e.Failed, 10), e.Rate, e.Rate}})
		}
	}
	s.Blocks = append(s.Blocks, Para{Only: documents, Text: "What the runs from each place saw (--vantage); a row marked ✗ fails more from there than from the other vantages."}, tb)
	return s
}
