package render

import "strconv"

// A terminal's report is terse unless --detail asks for it whole: the
// answer first and last, the tables that hold the evidence, and neither
// the statistics (the documents and JSON carry them) nor a block that
// says little in the run at hand.

// detailHint ends a terse report: where the rest is.
const detailHint = "Statistics and every block: --detail, or the Markdown, HTML or JSON report."

// minTimeline is the fewest slices of a timeline a terse report draws: a
// shorter one shows no more than the tables.
const minTimeline = 10

// dnsRepeats reports whether the DNS answers only repeat the tables of
// the endpoints: every address answered was probed, and no answer failed
// or changed, or differed between the inputs of a merged report.
func dnsRepeats(v *View) bool {
	hosts := map[string]bool{}
	for _, d := range v.DNS {
		if d.Failed || len(d.Changes) > 0 || d.Missed != "" || hosts[d.Host] {
			return false
		}
		hosts[d.Host] = true
	}
	return true
}

// phasesTell reports whether where the time went says more than the
// latency columns: something was slower than the rest, or a failure was
// an error (a timeout, a reset) rather than a status.
func phasesTell(v *View) bool {
	if len(v.Verdict.Slow) > 0 {
		return true
	}
	for _, w := range v.Who {
		if _, err := strconv.Atoi(w.What); err != nil {
			return true
		}
	}
	return false
}
