package render

import (
	"strings"
)

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
		if quote == 0 && r == ' ' && i > min {
			best = at
		}
		quote = quoted(quote, r)
		i++
	}
	return best
}

// inQuotes says whether s ends inside a quoted string.
func inQuotes(s string) bool {
	var quote rune
	for _, r := range s {
		quote = quoted(quote, r)
	}
	return quote != 0
}

// quoted is the quote open after r, when quote was open before it (0:
// none): a quote mark opens one, its own mark closes it.
func quoted(quote, r rune) rune {
	switch {
	case quote != 0 && r == quote:
		return 0
	case quote == 0 && (r == '"' || r == '\''):
		return r
	}
	return quote
}
