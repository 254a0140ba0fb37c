package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	ansiRed   = "\x1b[31m"
	ansiBold  = "\x1b[1m"
	ansiReset = "\x1b[0m"
	failMark  = "✗"
)

// writeText renders the report for a terminal: what ran, how each family and
// each endpoint fared, failing rows marked with ✗ (and red when color is set).
func writeText(w io.Writer, r *Report, color bool) error {
	tw := &textWriter{errWriter: errWriter{w: w}, color: color}
	tw.header(r)
	tw.dns(r)
	tw.families(r)
	tw.endpoints(r)
	tw.fingerprints(r)
	tw.phases(r)
	tw.timeline(r)
	tw.samples(r)
	tw.summary(r)
	return tw.err
}

// errWriter keeps the first write error; every later write is skipped, and
// the renderer returns the error at the end.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// textWriter writes the terminal report.
type textWriter struct {
	errWriter
	color bool
}

func (t *textWriter) style(code, s string) string {
	if !t.color || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (t *textWriter) header(r *Report) {
	planned := "max rate (closed model)"
	if !r.Plan.Max {
		planned = fmt.Sprintf("%s req/s planned", num(r.Plan.Rate))
	}
	took := fmt.Sprintf("%.1fs", r.DurationS)
	if r.SendS > 0 && r.DurationS-r.SendS >= 0.5 {
		took = fmt.Sprintf("%.1fs sending, then %.1fs waiting for requests in flight", r.SendS, r.DurationS-r.SendS)
	}
	t.printf("%s %s · %s – %s UTC (%s) · %s, %s achieved · %d requests · %d dropped\n",
		t.style(ansiBold, "pinprobe"), r.Version,
		r.StartedAt.UTC().Format("2006-01-02 15:04:05"), r.EndedAt.UTC().Format("15:04:05"),
		took, planned, strconv.FormatFloat(r.Totals.RPS, 'f', 1, 64), r.Totals.Requests, r.Totals.Dropped)
	if r.Interrupted {
		t.printf("%s\n", t.style(ansiRed+ansiBold, fmt.Sprintf(
			"INTERRUPTED after %.1fs: this report covers every request sent until then.", r.DurationS)))
	}
}

func (t *textWriter) dns(r *Report) {
	t.printf("\nDNS\n")
	rows := [][]string{}
	for _, d := range r.DNS {
		addrs := strings.Join(d.Addresses, ", ")
		if d.Error != "" {
			addrs = "no addresses: " + d.Error
		}
		rows = append(rows, []string{hostPort(d.Host, d.Port), d.Source, addrs})
		for _, c := range d.Changes {
			change := "changed at " + c.At.UTC().Format("15:04:05")
			if len(c.Added) > 0 {
				change += ": added " + strings.Join(c.Added, ", ")
			}
			if len(c.Removed) > 0 {
				change += ": removed " + strings.Join(c.Removed, ", ")
			}
			rows = append(rows, []string{"", "", change})
		}
	}
	t.table(nil, rows, nil, nil)
}

// fingerprints says who answered the failures: "20 × 502 'Microsoft-…/v2'
// Azure Application Gateway page on ::1 ×20 (fresh 1, reused 19)".
func (t *textWriter) fingerprints(r *Report) {
	if len(r.Fingerprints) == 0 {
		return
	}
	t.printf("\nWHO ANSWERED THE FAILURES\n")
	var rows [][]string
	var failing []bool
	for _, f := range r.Fingerprints {
		what := f.Error
		if f.Merged {
			what = "other kinds (past the first 64, counted together)"
		} else if f.Status != 0 {
			what = strconv.Itoa(f.Status)
			if f.Server != "" {
				what += " '" + f.Server + "'"
			}
			if f.Producer != "" {
				what += " " + f.Producer + " page"
			} else if f.BodyHash != "" {
				what += " body " + f.BodyHash
			}
		}
		rows = append(rows, []string{failMark, strconv.FormatInt(f.Count, 10) + " ×", what,
			"on " + counts(f.Addresses, " ×"), fmt.Sprintf("(fresh %d, reused %d)", f.Fresh, f.Reused)})
		failing = append(failing, true)
	}
	t.table(nil, rows, []bool{false, true}, failing)
}

// phases shows connect, TLS and time to first byte, so an instant 502
// (made by the gateway) reads apart from one after a long wait (upstream timeout).
func (t *textWriter) phases(r *Report) {
	t.printf("\nPHASES p50 / p99  (connect and TLS on new connections only)\n")
	head := []string{"", "ADDRESS", "CONNECT", "TLS", "FIRST BYTE", "FAILED ON NEW CONN", "ON REUSED CONN"}
	var rows [][]string
	var failing []bool
	for _, e := range r.Endpoints {
		fresh, reused := e.Connections["fresh"], e.Connections["reused"]
		rows = append(rows, []string{mark(&e.Stats), e.Address, phaseCell(e.Phases.Connect), phaseCell(e.Phases.TLS),
			phaseCell(e.Phases.TTFB), fmt.Sprintf("%d of %d", fresh.Failed, fresh.Requests),
			fmt.Sprintf("%d of %d", reused.Failed, reused.Requests)})
		failing = append(failing, e.Failed > 0)
	}
	t.table(head, rows, nil, failing)
}

// dnsNote marks an endpoint whose address appeared or vanished during the run.
func dnsNote(e *Endpoint) string {
	switch {
	case e.RemovedAt != nil:
		return " (left DNS " + e.RemovedAt.UTC().Format("15:04:05") + ")"
	case e.AddedAt != nil:
		return " (in DNS from " + e.AddedAt.UTC().Format("15:04:05") + ")"
	}
	return ""
}

func phaseCell(p Phase) string {
	if p.Count == 0 {
		return "-"
	}
	return latency(p.P50, 1) + " / " + latency(p.P99, 1)
}

// timeline draws one sparkline per endpoint: ▁ no failure … █ all failed.
func (t *textWriter) timeline(r *Report) {
	tl := r.Timeline
	if len(tl.Series) == 0 {
		return
	}
	var rows [][]string
	var failing []bool
	per := 1
	for i, s := range tl.Series {
		line, p := Sparkline(s.Requests, s.Failed, 60)
		per = p
		rows = append(rows, []string{mark(&r.Endpoints[i].Stats), s.Address, "|" + line + "|"})
		failing = append(failing, r.Endpoints[i].Failed > 0)
	}
	t.printf("\nTIMELINE  failure ratio per %s from %s UTC (▁ none … █ all failed, blank: no request)\n",
		secs(tl.IntervalS*float64(per)), tl.Start.UTC().Format("15:04:05"))
	t.table(nil, rows, nil, failing)
}

func secs(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) + "s" }

// samples lists the first failed requests of each failing endpoint, with
// what a provider needs to find them in its logs.
func (t *textWriter) samples(r *Report) {
	var rows [][]string
	for _, e := range r.Endpoints {
		shown := 0
		for _, s := range e.Samples {
			if !s.Failed || shown >= 2 {
				continue
			}
			shown++
			what := strconv.Itoa(s.Status)
			if s.Status == 0 {
				what = s.Class
			}
			conn := "fresh"
			if s.Reused {
				conn = "reused"
			}
			rows = append(rows, []string{e.Address, s.At.UTC().Format("15:04:05.000"), what, s.RequestID,
				orDash(s.Local) + " → " + orDash(s.Remote), conn, latency(s.LatencyMS, 1)})
		}
	}
	if len(rows) == 0 {
		return
	}
	t.printf("\nFAILED REQUESTS (the first two of each failing address; every sample is in the JSON and Markdown reports)\n")
	t.table([]string{"ADDRESS", "AT (UTC)", "STATUS", "X-REQUEST-ID", "LOCAL → REMOTE", "CONN", "LATENCY"}, rows, nil, nil)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var statsHeader = []string{"REQUESTS", "FAILED", "", "STATUS", "ERRORS", "P50", "P99", "MAX", "DROPPED"}
var statsRight = []bool{true, true, true, false, false, true, true, true, true}

func statsCells(s *Stats) []string {
	return []string{
		strconv.FormatInt(s.Requests, 10),
		strconv.FormatInt(s.Failed, 10),
		pct(s.FailureRate, s.Requests),
		counts(s.Status, "×"),
		counts(s.Errors, "×"),
		latency(s.LatencyMS.P50, s.Requests),
		latency(s.LatencyMS.P99, s.Requests),
		latency(s.LatencyMS.Max, s.Requests),
		strconv.FormatInt(s.Dropped, 10),
	}
}

func (t *textWriter) families(r *Report) {
	t.printf("\nBY FAMILY\n")
	endpoints := map[string]int{}
	for _, e := range r.Endpoints {
		endpoints[e.Family]++
	}
	head := append([]string{"", "FAMILY", "ENDPOINTS"}, statsHeader...)
	right := append([]bool{false, false, true}, statsRight...)
	var rows [][]string
	var failing []bool
	for _, fam := range sortedKeys(r.Families) {
		s := r.Families[fam]
		rows = append(rows, append([]string{mark(s), fam, strconv.Itoa(endpoints[fam])}, statsCells(s)...))
		failing = append(failing, s.Failed > 0)
	}
	rows = append(rows, append([]string{"", "total", strconv.Itoa(len(r.Endpoints))}, statsCells(&r.Totals)...))
	failing = append(failing, false)
	t.table(head, rows, right, failing)
}

func (t *textWriter) endpoints(r *Report) {
	head := append([]string{"", "ADDRESS", "FAMILY"}, statsHeader...)
	right := append([]bool{false, false, false}, statsRight...)
	byTarget := map[string][]int{}
	var targets []string
	for i, e := range r.Endpoints {
		if _, ok := byTarget[e.Target]; !ok {
			targets = append(targets, e.Target)
		}
		byTarget[e.Target] = append(byTarget[e.Target], i)
	}
	for _, target := range targets {
		t.printf("\nBY ENDPOINT  %s\n", target)
		var rows [][]string
		var failing []bool
		for _, i := range byTarget[target] {
			e := &r.Endpoints[i]
			rows = append(rows, append([]string{mark(&e.Stats), e.Address + dnsNote(e), e.Family}, statsCells(&e.Stats)...))
			failing = append(failing, e.Failed > 0)
		}
		t.table(head, rows, right, failing)
	}
}

func (t *textWriter) summary(r *Report) {
	v := r.Verdict
	t.printf("\n")
	label := "VERDICT " + strings.ToUpper(v.Status)
	code := ansiBold
	if v.Status == VerdictConcentrated || v.Status == VerdictSpread {
		code = ansiRed + ansiBold
	}
	t.printf("%s  %s\n", t.style(code, label), v.Summary)
}

// table prints rows in aligned columns, two spaces apart, indented by two.
func (t *textWriter) table(head []string, rows [][]string, right, failing []bool) {
	all := rows
	if head != nil {
		all = append([][]string{head}, rows...)
	}
	var widths []int
	for _, row := range all {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	line := func(row []string) string {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < len(right) && right[i] {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	if head != nil {
		t.printf("%s\n", t.style(ansiBold, line(head)))
	}
	for i, row := range rows {
		s := line(row)
		if i < len(failing) && failing[i] {
			s = t.style(ansiRed, s)
		}
		t.printf("%s\n", s)
	}
}

func mark(s *Stats) string {
	if s.Failed > 0 {
		return failMark
	}
	return ""
}

func hostPort(host string, port uint16) string {
	if strings.Contains(host, ":") {
		return fmt.Sprintf("[%s]:%d", host, port)
	}
	return fmt.Sprintf("%s:%d", host, port)
}

// counts formats {"200": 9, "502": 3} as "200×9 502×3", largest first.
func counts(m map[string]int64, sep string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + sep + strconv.FormatInt(m[k], 10)
	}
	return strings.Join(parts, " ")
}

func pct(rate float64, n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatFloat(rate*100, 'f', 1, 64) + "%"
}

// latency formats milliseconds with about three significant digits.
func latency(v float64, n int64) string {
	switch {
	case n == 0:
		return "-"
	case v >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + "s"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64) + "ms"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64) + "ms"
	default:
		return strconv.FormatFloat(v, 'f', 2, 64) + "ms"
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
