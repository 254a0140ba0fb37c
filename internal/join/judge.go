package join

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// alpha is the level of the backend tests, split over every test made
// (Bonferroni), as the verdict's and compare's are.
const alpha = 0.001

// judge tests each backend, instance and listener against the rest of its
// kind (Fisher's exact test, one-sided), and says where the failures went:
// the findings, strongest first, and the conclusion.
func (j *Joiner) judge(out *Join) {
	out.Findings = []Finding{}
	testScopes(out)
	failedTotal := out.Lines.Failed
	switch {
	case out.Lines.Run == 0:
		out.Status = StatusNothing
		out.Conclusion = j.nothingFound(out)
		out.Findings = append(out.Findings, Finding{Kind: "absent", Text: out.Conclusion})
		return
	case failedTotal == 0:
		out.Status = StatusNoFailure
		out.Conclusion = fmt.Sprintf("No line of the run failed: %d request%s logged, every backend answered.", out.Lines.Run, words.Plural(int(out.Lines.Run)))
		out.Findings = append(out.Findings, Finding{Kind: "backend", Text: out.Conclusion})
	case len(out.Backends) == 0:
		out.Status = StatusUntraced
		out.Conclusion = j.noBackends(out, failedTotal)
		out.Findings = append(out.Findings, Finding{Kind: "backend", Text: out.Conclusion})
	default:
		out.Status = StatusTraced
		j.routedFindings(out)
		backendFindings(out)
		for _, s := range out.Instances {
			if s.Significant {
				p := s.P
				text := fmt.Sprintf("Instance %s failed %d of %d requests (%s), more than the other instances (%s).", s.Name, s.Failed, s.Requests, words.PctRate(s.FailureRate), words.PValue(p))
				out.Findings = append(out.Findings, Finding{Kind: "instance", Scope: s.Name, Text: text, P: &p})
			}
		}
		out.Conclusion = out.Findings[0].Text
	}
	j.absent(out)
}

// testScopes tests each backend, instance and listener that failed against
// the rest of its kind, at alpha split over every test made.
func testScopes(out *Join) {
	tests := 0
	for _, list := range [][]Scope{out.Backends, out.Instances, out.Listeners} {
		if len(list) > 1 {
			tests += len(list)
		}
	}
	level := alpha / float64(max(tests, 1))
	for _, list := range [][]Scope{out.Backends, out.Instances, out.Listeners} {
		if len(list) < 2 {
			continue
		}
		var n, f int64
		for _, s := range list {
			n, f = n+s.Requests, f+s.Failed
		}
		for i := range list {
			s := &list[i]
			if s.Failed == 0 {
				continue
			}
			s.P = stat.FisherGreater(s.Failed, s.Requests, f-s.Failed, n-s.Requests)
			s.Significant = s.P < level
		}
	}
}

// routedFindings says where each failing status went, when to at most
// three backends: "All 250 502s were routed to [::1]:8081, by instance
// gw-3."
func (j *Joiner) routedFindings(out *Join) {
	statuses := map[string]int64{}
	// Failed lines of logs that name no backend are in no backend's count.
	unnamed := out.Lines.Failed
	for _, s := range out.Backends {
		unnamed -= s.Failed
		for st, c := range s.Status {
			if failedStatus(j, st) {
				statuses[st] += c
			}
		}
	}
	for _, st := range words.ByCount(statuses) {
		var at []string
		for _, s := range out.Backends {
			if c := s.Status[st]; c > 0 {
				at = append(at, backendName(s))
			}
		}
		if len(at) > 3 {
			continue
		}
		what := "all " + strconv.FormatInt(statuses[st], 10) + " " + statusWord(st)
		verb := "were"
		if statuses[st] == 1 {
			what, verb = "the one "+strings.TrimSuffix(statusWord(st), "s"), "was"
		}
		if j.sampled && out.Missing.Requests > 0 {
			// A sample's count is not the run's: say whose it is (a log
			// sampled at 1.0 that holds the whole run is no sample).
			what += " of the log's sample"
		}
		where := verb + " routed to " + words.JoinAnd(at)
		kind := "backend"
		if len(at) == 1 && at[0] == "no backend" {
			where, kind = verb+" routed to no backend: the gateway answered itself", "unrouted"
		}
		text := words.Capitalize(what) + " " + where
		if inst := scopesWith(out.Instances, st); len(inst) > 0 && len(inst) <= 3 && len(out.Instances) > 1 {
			text += ", by instance" + words.Plural(len(inst)) + " " + words.JoinAnd(inst)
		}
		if unnamed > 0 {
			text += fmt.Sprintf("; %d more failed in logs that name no backend", unnamed)
		}
		text += j.gatewaySays(st, statuses[st])
		out.Findings = append(out.Findings, Finding{Kind: kind, Scope: strings.Join(at, ", "), Text: text + "."})
	}
}

// gatewaySays says the gateway's own reason for the most of the n failed
// lines of status st, in words with its code kept: "; the gateway says:
// the backend timed out before its response headers (sH)"; "" when the
// log gives none.
func (j *Joiner) gatewaySays(st string, n int64) string {
	var top uint32
	var c int64
	for id, k := range j.failReasons[st] {
		if name := j.reasons.list[id]; name != othersName && (k > c || k == c && name < j.reasons.list[top]) {
			top, c = id, k
		}
	}
	if c == 0 {
		return ""
	}
	code := j.reasons.list[top]
	what := code
	if w := j.reasonWords[code]; w != "" { // said as the log was read, by its kind
		what = w + " (" + code + ")"
	}
	of := ""
	if c < n {
		of = fmt.Sprintf(" of %d of them", c)
	}
	return "; the gateway says" + of + ": " + what
}

// backendFindings says each backend that fails significantly more than
// the others, the backends of one family failing while the other's do
// not, and the backends that answered every request.
func backendFindings(out *Join) {
	var clean []string
	var cleanN int64
	for _, s := range out.Backends {
		p := s.P
		switch {
		case s.Significant:
			text := fmt.Sprintf("Backend %s failed %d of %d requests (%s), more than the other backends (%s).",
				backendName(s), s.Failed, s.Requests, words.PctRate(s.FailureRate), words.PValue(p))
			out.Findings = append(out.Findings, Finding{Kind: "backend", Scope: s.Name, Text: text, P: &p})
		case s.Failed == 0 && s.Name != "(none)":
			clean = append(clean, backendName(s))
			cleanN += s.Requests
		}
	}
	fam := map[string][2]int64{}
	famNames := map[string][]string{}
	for _, s := range out.Backends {
		if s.Family != "" {
			v := fam[s.Family]
			fam[s.Family] = [2]int64{v[0] + s.Requests, v[1] + s.Failed}
			famNames[s.Family] = append(famNames[s.Family], s.Name)
		}
	}
	if v4, v6 := fam["ipv4"], fam["ipv6"]; v4[0] > 0 && v6[0] > 0 {
		for _, c := range []struct {
			bad, good string
			b, g      [2]int64
		}{{"IPv6", "IPv4", v6, v4}, {"IPv4", "IPv6", v4, v6}} {
			if c.b[1] > 0 && c.g[1] == 0 {
				p := stat.FisherGreater(c.b[1], c.b[0], c.g[1], c.g[0])
				good := famNames[strings.ToLower(c.good)]
				sort.Strings(good)
				text := fmt.Sprintf("%s backends failed %d of %d requests; %s backends (%s) answered every request (%d).",
					c.bad, c.b[1], c.b[0], c.good, words.JoinAnd(words.CapItems(good, 5)), c.g[0])
				out.Findings = append(out.Findings, Finding{Kind: "family", Scope: strings.ToLower(c.bad), Text: text, P: &p})
			}
		}
	}
	if len(clean) > 0 && !familyCleared(out.Findings) {
		sort.Strings(clean)
		text := fmt.Sprintf("Backend%s %s answered every request (%d).", words.Plural(len(clean)), words.JoinAnd(words.CapItems(clean, 5)), cleanN)
		out.Findings = append(out.Findings, Finding{Kind: "backend", Scope: strings.Join(clean, ", "), Text: text})
	}
}

// familyCleared reports whether a family finding already named the
// backends that answered every request.
func familyCleared(fs []Finding) bool {
	for _, f := range fs {
		if f.Kind == "family" {
			return true
		}
	}
	return false
}

// formatMissed says that the logs' format matched none of their lines
// (none parsed as a request), how many were read, and, from the first log
// that says where a line left its format, what to change.
func formatMissed(logs []Log) string {
	var read int64
	var formats []string
	for _, l := range logs {
		read += l.Lines
		formats = append(formats, l.Format)
	}
	formats = words.Dedupe(formats)
	of, as := "the logs", "their formats ("+strings.Join(formats, ", ")+")"
	if len(logs) == 1 {
		of, as = logs[0].Name, formats[0]
	}
	if len(formats) == 1 {
		as = "the " + formats[0]
	}
	if strings.HasSuffix(as, "log_format") || strings.HasSuffix(as, "log-format") {
		as += " given (--log-format)"
	}
	s := fmt.Sprintf("The format matched no line: none of the %d line%s read from %s parsed as %s", read, words.Plural(int(read)), of, as)
	for _, l := range logs {
		if l.Unmatched != nil {
			return s + "; " + unmatchedWords(&l, len(logs) > 1) + "."
		}
	}
	return s + ": give --log-type, and --log-format with the format the gateway writes this log in."
}

// unmatchedWords says where a log's first line that did not parse left its
// custom format, and what to check: "line 1 leaves it at column 16, where
// the format has ` - ` and the line `:50158 [04/Dec/2026:23:5`: …"; the
// log is named when named is set.
func unmatchedWords(l *Log, named bool) string {
	u := l.Unmatched
	line := fmt.Sprintf("line %d", u.Line)
	if named {
		line += " of " + l.Name
	}
	switch {
	case u.ReadsAs != "":
		return fmt.Sprintf("%s reads as %s: leave out --log-format (pinprobe reads that format itself), or give the log_format the gateway writes this log with", line, u.ReadsAs)
	case u.FormatHas != "":
		has := "the line `" + u.LineHas + "`"
		if u.LineHas == "" {
			has = "the line ends"
		}
		return fmt.Sprintf("%s leaves it at column %d, where the format has `%s` and %s: check --log-format against the format the gateway writes this log with, character for character between the variables",
			line, u.Column, u.FormatHas, has)
	case u.LineHas != "":
		return fmt.Sprintf("%s goes on where the format ends, at column %d, with `%s`: give --log-format the whole format the gateway writes this log with", line, u.Column, u.LineHas)
	}
	return line + " follows it to its end, but a value in it does not read as its variable's (a time in another form): check the variables --log-format names"
}

// absent adds a finding for what of the run the log does not hold.
func (j *Joiner) absent(out *Join) {
	for i := range out.Logs {
		if l := &out.Logs[i]; l.Lines > 0 && l.Records == 0 {
			text := fmt.Sprintf("%s: the format matched none of its %d line%s", l.Name, l.Lines, words.Plural(int(l.Lines)))
			if l.Unmatched != nil {
				text += "; " + unmatchedWords(l, false)
			}
			out.Findings = append(out.Findings, Finding{Kind: "absent", Scope: l.Name, Text: text + "."})
		}
	}
	m := out.Missing
	if m.Requests == 0 && m.Trail == 0 {
		return
	}
	if m.Sampled {
		out.Findings = append(out.Findings, Finding{Kind: "absent", Text: sampledWords(out) + "."})
		return
	}
	text := fmt.Sprintf("%d of the run's %d requests are not in the log", m.Requests, out.Run.Requests)
	if m.Trail > 0 {
		text += fmt.Sprintf("; %d listed single request%s matched no line (%s)", m.Trail, words.Plural(int(m.Trail)), strings.Join(words.CapItems(m.IDs, 3), ", "))
	}
	if len(m.Gaps) > 0 {
		g := m.Gaps[0]
		text += fmt.Sprintf("; nothing was logged from %s to %s (%d requests sent): a rotated log, or a gateway that did not log", words.Clock(g.From.Time), words.Clock(g.To.Time), g.Requests)
	}
	out.Findings = append(out.Findings, Finding{Kind: "absent", Text: text + "."})
}

// sampledWords says what a sampled log holds of the run, and why the
// requests it lacks are not missing from the gateway: "The logs hold 27
// of the run's 150 requests (18%): Google Cloud logs a sample …; the 123
// they lack are not missing from the gateway."
func sampledWords(out *Join) string {
	why := ""
	for _, l := range out.Logs {
		if l.Partial != "" {
			why = l.Partial
			break
		}
	}
	placed := out.Lines.Run
	return fmt.Sprintf("The logs hold %d of the run's %d requests (%s): %s; the %d they lack are not missing from the gateway",
		placed, out.Run.Requests, words.PctRate(rate(placed, out.Run.Requests)), why, out.Missing.Requests)
}

// noBackends is the conclusion of a log that names no backend: the
// failures by endpoint, and what to log.
func (j *Joiner) noBackends(out *Join, failed int64) string {
	var at []string
	for _, e := range out.Endpoints {
		if e.LoggedFailed > 0 {
			at = append(at, fmt.Sprintf("%s (%d of %d)", e.Address, e.LoggedFailed, e.Logged))
		}
	}
	via := ""
	if len(at) > 0 {
		via = ", through " + words.JoinAnd(words.CapItems(at, 5))
	}
	return fmt.Sprintf("The logs name no backend: %d of the run's %d logged requests failed%s; %s to see where the gateway sent them.",
		failed, out.Lines.Run, via, backendAdvice(out.Logs))
}

// backendAdvice says how the logs read would name the backend: in their
// gateway's own terms when they are all of one kind.
func backendAdvice(logs []Log) string {
	kind := ""
	for i, l := range logs {
		if i > 0 && l.Kind != kind {
			kind = ""
			break
		}
		kind = l.Kind
	}
	if kind == "azure" {
		// A query that projected the column away, or a v1 record
		// without SERVER-ROUTED in its requestQuery.
		return "export ServerRouted and ServerStatus with the rest (serverRouted_s and serverStatus_s in AzureDiagnostics, SERVER-ROUTED in a v1 gateway's requestQuery; where they were exported and are empty, the gateway routed none of them)"
	}
	return "log the backend ($upstream_addr and $upstream_status in nginx, %b/%s in HAProxy)"
}

// nothingFound says why no line of the run was found.
func (j *Joiner) nothingFound(out *Join) string {
	l := out.Lines
	var read int64
	for _, lg := range out.Logs {
		read += lg.Lines
	}
	switch {
	case l.Records == 0 && read > 0:
		return formatMissed(out.Logs)
	case l.Records == 0:
		return "The logs hold no request: nothing to join."
	case l.OtherRuns > 0 && l.OtherClients == 0 && l.Outside == 0:
		return fmt.Sprintf("No line of this run: the %d lines with pinprobe request IDs are of other runs.", l.OtherRuns)
	}
	s := fmt.Sprintf("Nothing of this run in the logs: of their %d requests, %d are of other clients, %d outside the run's window (%s to %s, within --max-offset)",
		l.Records, l.OtherClients, l.Outside, words.Clock(out.Run.StartedAt.Time), words.Clock(out.Run.EndedAt.Time))
	if l.NoKnownEndpoint > 0 {
		s += fmt.Sprintf(", %d to no endpoint of the run (another path, host or listener)", l.NoKnownEndpoint)
	}
	if l.Preflight > 0 {
		s += fmt.Sprintf(", %d pinprobe's preflight check", l.Preflight)
	}
	return s + ": give --client with the address the gateway sees pinprobe as, or the log of the run's time."
}

func failedStatus(j *Joiner, st string) bool {
	if st == "none" {
		return true
	}
	n, err := strconv.Atoi(st)
	return err == nil && j.fail.Fails(n)
}

func statusWord(st string) string {
	if st == "none" {
		return "requests answered with no status"
	}
	return st + "s"
}

// backendName names a backend with its family.
func backendName(s Scope) string {
	switch {
	case s.Name == "(none)":
		return "no backend"
	case s.Family != "":
		return s.Name + " (" + words.FamilyName(s.Family) + ")"
	}
	return s.Name
}

// scopesWith names the scopes whose lines hold status st.
func scopesWith(list []Scope, st string) []string {
	var out []string
	for _, s := range list {
		if s.Status[st] > 0 {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}
