package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/words"
)

// MaxReportSize is the largest report Read accepts, in bytes.
const MaxReportSize = 256 << 20

// ReadLimit is MaxReportSize; tests lower it.
var ReadLimit int64 = MaxReportSize

// Read decodes one saved pinprobe.report/v1 document from r and checks it, so it
// can be rendered, merged or compared; name starts every error. It refuses,
// saying why, what is not a pinprobe report of this schema, unknown fields,
// trailing data, more than MaxReportSize bytes, and numbers that break Validate
// or CheckSaved. Every string is made printable here, once (cleanStrings).
func Read(r io.Reader, name string) (*Report, error) {
	data, err := io.ReadAll(io.LimitReader(r, ReadLimit+1))
	if err != nil {
		return nil, fmt.Errorf("read report %s: %w", name, err)
	}
	return Parse(data, name)
}

// checkHead says why data, from the file name, is not a report of Schema,
// from its "schema" and "revision" fields alone, and returns its revision
// when it is one.
func checkHead(data []byte, name string) (int, error) {
	var head struct {
		Schema   *string          `json:"schema"`
		Revision *json.RawMessage `json:"revision"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&head); err != nil {
		return 0, fmt.Errorf("read report %s: not a pinprobe JSON report: %w", name, err)
	}
	switch s := head.Schema; {
	case s == nil:
		return 0, fmt.Errorf("read report %s: not a pinprobe report: no \"schema\" field", name)
	case *s == Schema:
	case strings.HasPrefix(*s, "pinprobe.report/"):
		return 0, fmt.Errorf("read report %s: schema %q: this pinprobe reads %s only (was it written by a newer pinprobe?)", name, Shown(*s), Schema)
	case strings.HasPrefix(*s, "pinprobe."):
		return 0, fmt.Errorf("read report %s: a %s document, not a report (%s)", name, Shown(*s), Schema)
	default:
		return 0, fmt.Errorf("read report %s: schema %q: not a pinprobe report", name, Shown(*s))
	}
	if head.Revision == nil {
		return 1, nil
	}
	var rev Rev
	if err := rev.UnmarshalJSON(*head.Revision); err != nil {
		return 0, fmt.Errorf("read report %s: %w", name, err)
	}
	return int(rev), nil
}

// Parse is Read of a report already read: data, from the file
// name. A report of a newer revision than this pinprobe's (see Revision)
// is read without the fields it does not know, and a note (in Notes) says
// which were left out; one of this revision or older that has a field the
// format does not is refused.
func Parse(data []byte, name string) (*Report, error) {
	if int64(len(data)) > ReadLimit {
		return nil, fmt.Errorf("read report %s: larger than %s, more than any pinprobe report", name, sizeWords(ReadLimit))
	}
	rep, err := parseReport(data, name)
	if err == nil {
		return rep, nil
	}
	rev, herr := checkHead(data, name)
	switch {
	case herr != nil:
		return nil, herr
	case rev <= Revision:
		return nil, err
	}
	pruned, paths, count, perr := pruneUnknown(data, reflect.TypeFor[Report]())
	if perr != nil {
		return nil, err
	}
	if rep, err = parseReport(pruned, name); err != nil {
		return nil, err
	}
	rep.Notes = append(rep.Notes, newerNote(name, rev, paths, count))
	return rep, nil
}

// parseReport decodes and checks data, refusing any field the format does
// not have.
func parseReport(data []byte, name string) (*Report, error) {
	// The report is decoded once; only when that fails, or names another
	// schema, is its head read on its own, for the error that says why.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rep Report
	if err := dec.Decode(&rep); err != nil || rep.Schema != Schema {
		if _, serr := checkHead(data, name); serr != nil {
			return nil, serr
		}
		if err == nil { // the schema that read is not the one decoded (a duplicate key)
			err = fmt.Errorf("schema %q", Shown(rep.Schema))
		}
		return nil, fmt.Errorf("read report %s: %w", name, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read report %s: data after the report", name)
	}
	if err := checkHDRBudget(&rep, len(data)); err != nil {
		return nil, fmt.Errorf("read report %s: %w", name, err)
	}
	cleanStrings(&rep)
	normalize(&rep)
	if err := CheckSaved(&rep); err != nil {
		return nil, fmt.Errorf("read report %s: %w", name, err)
	}
	return &rep, nil
}

// normalize gives the arrays that reports written before them lack their
// empty value, so a report read back writes [] where it has none, never
// null.
func normalize(r *Report) {
	for i := range r.Endpoints {
		if c := r.Endpoints[i].Conns; c != nil {
			orEmpty(&c.Moments)
			orEmpty(&c.Windows)
			orEmpty(&c.Sizes)
		}
	}
	for i := range r.Groups {
		orEmpty(&r.Groups[i].Times)
	}
	v := &r.Verdict
	orEmpty(&v.Suspects)
	orEmpty(&v.Tests)
	orEmpty(&v.Notes)
	orEmpty(&v.Slow)
}

// orEmpty makes a nil *s empty.
func orEmpty[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}

// CheckSaved checks what a report read back needs beyond Validate: addresses
// and targets (checkAddresses), numbers within bounds and times within
// 1970–2200 (checkNumbers), statuses 0–999, phase histograms holding their
// count, the port set, the timeline's buckets and bounds and the latency series
// (checkLatencies), a histogram for every scope with requests, summaries rising
// from min to max (latencyOrder) and times in order (checkTimes).
func CheckSaved(r *Report) error {
	if err := checkNumbers(r); err != nil {
		return fmt.Errorf("invalid report: %w", err)
	}
	if err := Validate(r); err != nil {
		return fmt.Errorf("invalid report: %w", err)
	}
	f := &faults{}
	bad := f.bad
	checkAddresses(r, f)
	stats := func(scope string, s *Stats) {
		for k := range s.Status {
			if c, err := strconv.Atoi(k); err != nil || c < 0 || c >= 1000 {
				bad("%s: status %q is not an HTTP status", scope, Shown(k))
			}
		}
		if s.Requests > 0 && s.HDR == "" {
			bad("%s: no hdr histogram, so its latencies cannot be merged", scope)
		}
		l := &s.LatencyMS
		if msg := latencyOrder([]float64{l.Min, l.P50, l.P90, l.P99, l.P999, l.Max}, []string{"min", "p50", "p90", "p99", "p999", "max"}); msg != "" {
			bad("%s: latency_ms: %s", scope, msg)
		}
	}
	for _, m := range checkTimes(r) {
		bad("%s", m)
	}
	checkPlan(&r.Plan, bad)
	stats("totals", &r.Totals)
	for _, name := range words.SortedKeys(r.Families) {
		stats("family "+Shown(name), r.Families[name])
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		stats("group "+g.Header+": "+g.Value, &g.Stats)
	}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		scope := "endpoint " + Shown(e.Address) + " (" + Shown(e.Target) + ")"
		stats(scope, &e.Stats)
		checkEndpoint(e, scope, bad)
	}
	checkClient(&r.Client, bad)
	checkPauses(r.Pauses, bad)
	for i := range r.Groups {
		if err := checkGroupTimes(&r.Groups[i]); err != "" {
			bad("%s", err)
		}
	}
	checkTimeline(&r.Timeline, bad)
	checkLatencies(r, bad)
	for _, e := range checkVantages(r) {
		bad("%s", e)
	}
	return f.err()
}

// badFunc records a fault of a saved report (see faults).
type badFunc func(format string, args ...any)

// faults gathers a check's faults: the first 3, and how many more.
type faults struct {
	msgs []string
	more int
}

func (f *faults) bad(format string, args ...any) {
	if len(f.msgs) < 3 {
		f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
	} else {
		f.more++
	}
}

// err says the faults on one line, nil when there are none.
func (f *faults) err() error {
	if len(f.msgs) == 0 {
		return nil
	}
	msgs := f.msgs
	if f.more > 0 {
		msgs = append(msgs, fmt.Sprintf("and %d more", f.more))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// checkPlan checks a saved plan: the pace grain, the group-by headers and
// the fail statuses.
func checkPlan(p *Plan, bad badFunc) {
	if g := p.PaceGrainS; !(g >= 0 && g <= 0.1) {
		bad("plan: pace_grain_s %v: must be 0 to 0.1", g)
	}
	if n := len(p.GroupBy); n > MaxGroupBy {
		bad("plan: group_by: %d headers (at most %d)", n, MaxGroupBy)
	} else {
		for _, h := range p.GroupBy {
			if h == "" || len(h) > MaxHeaderName {
				bad("plan: group_by: a header name of %d bytes (1 to %d)", len(h), MaxHeaderName)
			}
		}
	}
	if p.FailStatus != "" {
		if _, err := ParseFailStatus(p.FailStatus); err != nil {
			bad("plan: fail_status %v", err)
		}
	}
}

// checkEndpoint checks what a saved endpoint holds beyond its counts: its
// connection strata and windows, its trail and its phase histograms.
func checkEndpoint(e *Endpoint, scope string, bad badFunc) {
	if c := e.Conns; c != nil {
		for _, m := range c.Moments {
			if m.Strata <= 0 || !countsOK(m.RepeatCounts) || m.AfterFailure+m.AfterOK > MaxMoment {
				bad("%s: conns: a moment stratum of impossible counts %+v", scope, m)
			}
		}
		for _, m := range c.Sizes {
			if m.Strata <= 0 || m.Requests <= 0 || m.Requests > MaxMoment || m.Failed < 0 || m.Failed > m.Requests {
				bad("%s: conns: a moment size of impossible counts %+v", scope, m)
			}
		}
		for _, s := range c.Repeat {
			if !countsOK(s) {
				bad("%s: conns: a repeat stratum of impossible counts %+v", scope, s)
			}
		}
		for _, w := range c.Windows {
			if w.Requests < 0 || w.Connections < 0 || w.Crossing < 0 || w.Crossing > w.Connections {
				bad("%s: conns: a window of impossible counts (%d requests, %d connections, %d crossing it)", scope, w.Requests, w.Connections, w.Crossing)
				break
			}
		}
		if c.WindowsCount < int64(len(c.Windows)) || len(c.Windows) > MaxWindows {
			bad("%s: conns: %d windows listed, %d counted (at most %d are listed)", scope, len(c.Windows), c.WindowsCount, MaxWindows)
		}
	}
	if msg := checkTrail(e); msg != "" {
		bad("%s: %s", scope, msg)
	}
	if msg := checkIDRanges(e.IDRanges); msg != "" {
		bad("%s: id_ranges: %s", scope, msg)
	}
	for _, p := range []struct {
		name string
		ph   *Phase
	}{{"connect", &e.Phases.Connect}, {"tls", &e.Phases.TLS}, {"ttfb", &e.Phases.TTFB}} {
		if p.ph.Count < 0 {
			bad("%s: phase %s: negative count", scope, p.name)
		}
		if msg := latencyOrder([]float64{p.ph.P50, p.ph.P99, p.ph.Max}, []string{"p50", "p99", "max"}); msg != "" {
			bad("%s: phase %s: %s", scope, p.name, msg)
		}
		if p.ph.HDR == "" {
			continue
		}
		n, err := phaseHDRCount(p.ph.HDR)
		switch {
		case err != nil:
			bad("%s: phase %s: hdr does not decode: %v", scope, p.name, err)
		case n != p.ph.Count:
			bad("%s: phase %s: hdr holds %d values, not its count %d", scope, p.name, n, p.ph.Count)
		}
	}
}

// checkClient checks a saved client's port set against its count.
func checkClient(c *Client, bad badFunc) {
	if c := *c; c.PortSet != "" {
		ports, err := DecodePortSet(c.PortSet)
		switch {
		case err != nil:
			bad("client: %v", err)
		case !c.PortsLowerBound && len(ports) != c.PortsCount:
			bad("client: port_set holds %d ports, ports_count says %d", len(ports), c.PortsCount)
		}
	}
}

// checkPauses checks a saved report's pauses.
func checkPauses(pauses []Pause, bad badFunc) {
	if len(pauses) > MaxPauses {
		bad("pauses: %d listed (at most %d)", len(pauses), MaxPauses)
	}
	for _, p := range pauses {
		if p.Requests < 0 || p.DurationS < 0 {
			bad("pauses: a pause of impossible counts (%d requests, %v s)", p.Requests, p.DurationS)
			break
		}
	}
}

// checkTimeline checks a saved timeline: no bucket failing more requests
// than it holds, a positive interval, at most HardMaxPoints buckets over at
// most MaxSeconds, a start.
func checkTimeline(tl *Timeline, bad badFunc) {
	buckets := 0
	for _, s := range tl.Series {
		buckets = max(buckets, len(s.Requests))
		if _, _, j := bucketSums(s.Requests, s.Failed); j >= 0 {
			bad("timeline %s (%s): bucket %d: %d failed of %d requests", Shown(s.Address), Shown(s.Target), j, s.Failed[j], s.Requests[j])
		}
	}
	if buckets > 0 {
		switch {
		case Interval(tl.IntervalS) < TimelineMinInterval:
			bad("timeline: interval_s %v: want at least %v", tl.IntervalS, TimelineMinInterval.Seconds())
		case buckets > HardMaxPoints:
			bad("timeline: %d buckets: pinprobe writes at most %d", buckets, HardMaxPoints)
		case tl.IntervalS*float64(buckets) > MaxSeconds:
			bad("timeline: %d buckets of %v s cover more than 100 years", buckets, tl.IntervalS)
		case tl.Start.IsZero():
			bad("timeline: buckets but no start")
		}
	}
}

// checkLatencies bounds a saved timeline's latency series: at most
// MaxLatencyEndpoints endpoints and MaxGroupSeries groups have one, and
// every bucket lists bins below LatencyBins in increasing order, each with
// a count of at least one (so a bucket holds at most LatencyBins of them).
func checkLatencies(r *Report, bad badFunc) {
	tl := &r.Timeline
	check := func(name string, l *Latencies) {
		for i := range l.Bins {
			prev := -1
			for j, b := range l.Bins[i] {
				if int(b) <= prev || b >= LatencyBins || j >= len(l.Counts[i]) || l.Counts[i][j] <= 0 {
					bad("%s: latency bucket %d: bins must rise from 0 to %d, each with a count", name, i, LatencyBins-1)
					return
				}
				prev = int(b)
			}
		}
	}
	eps := 0
	for i := range tl.Series {
		if s := &tl.Series[i]; s.Latency != nil {
			eps++
			check("timeline "+Shown(s.Address)+" ("+Shown(s.Target)+")", s.Latency)
		}
	}
	if eps > MaxLatencyEndpoints {
		bad("timeline: latency series of %d endpoints (pinprobe keeps at most %d)", eps, MaxLatencyEndpoints)
	}
	if len(tl.Groups) > MaxGroupSeries {
		bad("timeline: %d group series (pinprobe keeps at most %d)", len(tl.Groups), MaxGroupSeries)
	}
	for k := range tl.Families {
		check("timeline: family "+Shown(tl.Families[k].Family), &tl.Families[k].Latency)
	}
	for k := range tl.Groups {
		check("timeline: group "+Shown(tl.Groups[k].Header)+": "+Shown(tl.Groups[k].Value), &tl.Groups[k].Latency)
	}
}

// latencySlack is how far a percentile may pass the next one of a saved
// summary: the summaries are read from histograms of 2 to 3 significant
// digits, rounded to the microsecond, while min and max are exact.
const latencySlack = 0.01

// latencyOrder says where the figures named names, each no less than the
// one before (min ≤ p50 ≤ p90 ≤ p99 ≤ p999 ≤ max), break that order, ""
// when they keep it (or are all 0: a scope of no requests). A summary
// pinprobe writes always keeps it, within latencySlack.
func latencyOrder(v []float64, names []string) string {
	for i := 1; i < len(v); i++ {
		if v[i-1] > v[i]*(1+latencySlack)+0.001 {
			return fmt.Sprintf("%s %v is above %s %v: a latency summary rises from min to max", names[i-1], v[i-1], names[i], v[i])
		}
	}
	return ""
}

// durationSlack is how far a run's duration_s may differ from its
// ended_at − started_at: both are written from one clock, to the
// millisecond.
const durationSlack = time.Second

// checkTimes says where a saved report's times cannot be: an end before
// its start (the report's, or an input's), or a duration_s that is not
// the time between them (at most it, for a merged report, whose runs may
// leave gaps).
func checkTimes(r *Report) []string {
	var errs []string
	order := func(where string, start, end Time) bool {
		if !start.IsZero() && !end.IsZero() && end.Before(start.Time) {
			errs = append(errs, fmt.Sprintf("%sended_at %s is before started_at %s", where,
				end.UTC().Format(time.RFC3339), start.UTC().Format(time.RFC3339)))
			return false
		}
		return true
	}
	if order("", r.StartedAt, r.EndedAt) && !r.StartedAt.IsZero() && !r.EndedAt.IsZero() {
		span := r.EndedAt.Sub(r.StartedAt.Time)
		d := time.Duration(r.DurationS * float64(time.Second))
		if r.DurationS != 0 && (d > span+durationSlack || len(r.Inputs) == 0 && d < span-durationSlack) {
			errs = append(errs, fmt.Sprintf("duration_s %v is not the %v from started_at to ended_at", r.DurationS, span.Seconds()))
		}
	}
	for i, in := range r.Inputs {
		order(fmt.Sprintf("inputs[%d]: ", i), in.StartedAt, in.EndedAt)
	}
	return errs
}

// checkGroupTimes says what is wrong with a saved group's time strata, ""
// when nothing is.
func checkGroupTimes(g *Group) string {
	name := "group " + Shown(g.Header) + ": " + Shown(g.Value)
	if len(g.Times) > MaxGroupTimes {
		return fmt.Sprintf("%s: %d time strata (at most %d)", name, len(g.Times), MaxGroupTimes)
	}
	var n int64
	for _, t := range g.Times {
		if t.Strata <= 0 || t.Requests <= 0 || t.Failed < 0 || t.Failed > t.Requests || t.RestRequests <= 0 || t.RestFailed < 0 || t.RestFailed > t.RestRequests {
			return fmt.Sprintf("%s: a time stratum of impossible counts %+v", name, t)
		}
		if t.Strata > g.Requests || t.Requests > (g.Requests-n)/t.Strata {
			return fmt.Sprintf("%s: time strata of more responses than the group's %d", name, g.Requests)
		}
		if t.RestRequests > maxTimeRest/t.Strata {
			return fmt.Sprintf("%s: time strata of more responses than %d others", name, int64(maxTimeRest))
		}
		n += t.Strata * t.Requests
	}
	return ""
}

// maxTimeRest bounds the other responses a group's time strata weigh it
// against, in all: far past any run, short of overflowing a sum.
const maxTimeRest = 1 << 40

// countsOK reports whether a stratum's counts can be: none negative, no
// class with more failures than requests.
func countsOK(c RepeatCounts) bool {
	return c.AfterFailureFailed >= 0 && c.AfterOKFailed >= 0 && c.AfterFailureFailed <= c.AfterFailure && c.AfterOKFailed <= c.AfterOK
}

// sizeWords says a size in MiB, or in bytes below one.
func sizeWords(n int64) string {
	if n >= 1<<20 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// checkIDRanges says what is wrong with an endpoint's ID ranges: more
// than MaxIDRanges, or not apart and in order from 1.
func checkIDRanges(rs []IDRange) string {
	if len(rs) > MaxIDRanges {
		return fmt.Sprintf("%d ranges, more than the %d pinprobe keeps", len(rs), MaxIDRanges)
	}
	var last int64
	for _, r := range rs {
		if r.First < 1 || r.Last < r.First || r.First <= last+1 && last > 0 {
			return fmt.Sprintf("[%d, %d] after %d: want ranges from 1, apart and in order", r.First, r.Last, last)
		}
		last = r.Last
	}
	return ""
}
