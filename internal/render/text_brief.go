package render

import (
	"fmt"
	"strings"

	"github.com/pinprobe/pinprobe/internal/words"
)

// briefWho is how many kinds of failed answer a brief report lists.
const briefWho = 3

// brief is the text report of --brief, one screen of it: the
// verdict in a line with the release gate and what ran, the families, the
// suspects, who answered, one failed request of each suspect and the log
// query that finds them.
func (t *textWriter) brief(v *View) {
	b := v.Brief()
	for _, blk := range reportTop(v) {
		if shows(blk.only(), FormatText) {
			t.block(blk, false)
		}
	}
	for _, n := range b.Notes {
		t.para("", " ·", n, 3)
	}
	t.section(familiesSection(v), false)
	t.suspects(b)
	who := *v // the first three kinds of answer, as in Markdown and HTML
	if len(v.Who) > briefWho {
		who.Who = v.Who[:briefWho]
	}
	t.section(whoSection(&who), false)
	if n := len(v.Who) - briefWho; n > 0 {
		t.para("", "  ", fmt.Sprintf("… and %d more kind%s of failure in the full report", n, words.Plural(n)), 4)
	}
	t.briefSamples(b)
	t.briefLogs(b)
}

// suspects is a row per suspect with its own figures.
func (t *textWriter) suspects(b *BriefView) {
	if len(b.Suspects) == 0 {
		return
	}
	t.heading("SUSPECTS")
	cols := []textCol{{}, {head: "SUSPECT"}, {head: "KIND", prio: 2}, {head: "FAILED", right: true}, {head: "RATE (95% CI)", prio: 4},
		{head: "P", prio: 3}, {head: "P50", right: true, prio: 5}, {head: "P99", right: true, prio: 6}}
	var rows [][]string
	var failing []bool
	for _, s := range b.Suspects {
		label := s.Label
		if s.Kind == "endpoint" && s.URL != "" {
			label += " " + s.URL
		}
		what := s.What
		if s.Family != "" && s.Kind == "endpoint" {
			what += ", " + s.Family
		}
		rows = append(rows, []string{failMark, label, what, s.Counts, s.RateCI, s.P, s.P50, s.P99})
		failing = append(failing, true)
	}
	t.table(textTable{cols: cols, rows: rows, failing: failing})
}

// briefSamples shows one failed request of each suspect.
func (t *textWriter) briefSamples(b *BriefView) {
	if len(b.Samples) == 0 {
		return
	}
	if b.Samples[0].For != "" {
		t.heading("ONE FAILED REQUEST OF EACH SUSPECT")
	} else {
		t.heading("FAILED REQUESTS  the first of each failing address")
	}
	for _, it := range b.Samples {
		s := &it.Row
		conn := s.Conn + " connection " + s.Local + " → " + s.Remote
		if s.Conn == "none" {
			conn = "no connection to " + s.Remote
		}
		lead := it.Label
		if it.For != "" {
			lead = it.For
			if !strings.Contains(it.For, it.Label) {
				lead += " (" + it.Label + ")"
			}
		}
		line := fmt.Sprintf("%s · %s · %s · %s · %s", lead, s.Clock, s.Result, s.Latency, conn)
		id := ""
		if s.RequestID != "" {
			id = "sent X-Request-Id: " + s.RequestID
		}
		// The ID on the line when all of it fits, else on a line of its own.
		if id != "" && runes(" "+failMark+" "+line+" · "+id) <= t.width {
			line, id = line+" · "+id, ""
		}
		t.failing(" "+failMark, line, 4)
		if id != "" {
			t.para("", "   ", id, 4)
		}
	}
}

// briefLogs shows each log query under a heading that says what it finds
// (cut to the width), its lines broken to the width where the query's
// language allows.
func (t *textWriter) briefLogs(b *BriefView) {
	l := &b.Logs
	switch {
	case len(l.Queries) > 0:
		for _, q := range l.Queries {
			title := "IN THE LOGS  " + q.Gateway
			if q.Query.Failing {
				title += ": the requests of the failing connections"
			}
			t.heading(title)
			for _, line := range codeLines(q.Query.Text, q.Query.Lang, t.width-2) {
				t.printf("  %s\n", line)
			}
		}
	case len(l.Filters) > 0:
		t.heading("IN THE LOGS  filter any access log on")
		for _, f := range l.Filters {
			var words []string
			for _, s := range f.Value {
				words = append(words, s.Text)
			}
			t.para("", " ·", f.Name+": "+strings.Join(words, ""), 3)
		}
	}
}

// codeLines breaks each line of a query longer than width at a space
// outside quotes: a KQL or SQL line goes on indented, a shell line after
// a backslash. A trailing comment ("// …" in KQL, "-- …" in SQL) moves
// to lines of its own above its code, each with the comment's mark (its
// "this line" becoming "the line below"), as does a shell comment ("# …").
// A line that cannot be broken stays whole. A list of numbers (client
// ports) that goes on over several lines is filled to the width again, a
// line of it broken as the rest are, so its lines are full.
func codeLines(text, lang string, width int) []string {
	mark := map[string]string{"kusto": "//", "sql": "--", "sh": "#"}[lang]
	var out []string
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if n := len(lines); n > 0 && lang != "sh" && strings.HasSuffix(lines[n-1], ",") && numberList(line) {
			lines[n-1] += " " + strings.TrimSpace(line)
			continue
		}
		lines = append(lines, line)
	}
	comment := func(indent, c string) {
		for _, l := range wrapWords(strings.TrimSpace(strings.TrimPrefix(c, mark)), width-runes(indent+mark)-1, width-runes(indent+mark)-1) {
			out = append(out, indent+mark+" "+l)
		}
	}
	for _, line := range lines {
		if runes(line) <= width {
			out = append(out, line)
			continue
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		if mark != "" && strings.HasPrefix(strings.TrimSpace(line), mark) {
			comment(indent, strings.TrimSpace(line))
			continue
		}
		if i := strings.Index(line, "  "+mark+" "); mark != "" && lang != "sh" && i > 0 && !inQuotes(line[:i]) {
			// Above its code, "this line" would be the comment's own.
			comment(indent, strings.Replace(line[i+2:], "this line", "the line below", 1))
			line = strings.TrimRight(line[:i], " ")
		}
		cont := indent + "    "
		suffix := ""
		if lang == "sh" {
			suffix = " \\"
		}
		for runes(line) > width {
			cut := breakAt(line, width-runes(suffix), runes(cont))
			if cut < 0 {
				break
			}
			out = append(out, line[:cut]+suffix)
			line = cont + strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return out
}

// numberList reports whether line holds only numbers, commas and spaces,
// and perhaps the parenthesis that closes them: the rest of a list.
func numberList(line string) bool {
	s := strings.TrimSpace(line)
	return s != "" && strings.Trim(s, "0123456789, )") == "" && strings.ContainsAny(s, "0123456789")
}

// breakAt is the byte index of the last space outside quotes in line at
// or before rune n, past rune min; -1 when there is none.
func breakAt(line string, n, min int) int {
	best := -1
	var quote rune
	i := 0
	for at, r := range line {
		if i > n {
			break
		}
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		case quote == 0 && r == ' ' && i > min:
			best = at
		}
		i++
	}
	return best
}

// inQuotes says whether s ends inside a quoted string.
func inQuotes(s string) bool {
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		}
	}
	return quote != 0
}
