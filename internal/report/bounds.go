package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// bounds checks every number and timestamp of a saved report, type by
// type (the bound methods below), and refuses the first out of bounds,
// naming its place in the document: a negative number, a count past
// MaxCount, a duration past MaxSeconds, a timestamp outside 1970 to 2200.
// Every number of the schema is a count, a duration, a rate, a p-value or
// a level, none of them negative. TestBoundsCoverEveryNumber proves that
// every number of every type is checked.
type bounds struct {
	path []string
	err  error
}

// checkNumbers checks r's numbers and timestamps (see bounds).
func checkNumbers(r *Report) error {
	b := &bounds{}
	r.bound(b)
	return b.err
}

func (b *bounds) where() string {
	var s strings.Builder
	for _, p := range b.path {
		if !strings.HasPrefix(p, "[") && s.Len() > 0 {
			s.WriteByte('.')
		}
		s.WriteString(Shown(p))
	}
	return s.String()
}

// fail keeps the first error, at name under the current place.
func (b *bounds) fail(name, format string, args ...any) {
	if b.err != nil {
		return
	}
	if name != "" {
		b.path = append(b.path, name)
	}
	b.err = fmt.Errorf("%s: %s", b.where(), fmt.Sprintf(format, args...))
}

// in checks a part of the document under name ("": where it is).
func (b *bounds) in(name string, check func(*bounds)) {
	if b.err != nil {
		return
	}
	if name == "" {
		check(b)
		return
	}
	b.path = append(b.path, name)
	check(b)
	b.path = b.path[:len(b.path)-1]
}

func (b *bounds) count(name string, n int64) {
	switch {
	case n < 0:
		b.fail(name, "%d is negative", n)
	case n > MaxCount:
		b.fail(name, "%d is more than any pinprobe run counts (at most 2^40)", n)
	}
}

func (b *bounds) bytes(name string, n int64) {
	switch {
	case n < 0:
		b.fail(name, "%d is negative", n)
	case n > MaxBytes:
		b.fail(name, "%d is more bytes than any pinprobe run counts (at most 2^53)", n)
	}
}

func (b *bounds) float(name string, f, limit float64) {
	switch {
	case f < 0:
		b.fail(name, "%v is negative", f)
	case f > limit:
		b.fail(name, "%v is larger than any pinprobe run measures", f)
	}
}

// number is a count-like number: a rate, a ratio, a p-value, a level.
func (b *bounds) number(name string, f float64) { b.float(name, f, MaxCount) }
func (b *bounds) secs(name string, f float64)   { b.float(name, f, MaxSeconds) }
func (b *bounds) ms(name string, f float64)     { b.float(name, f, MaxSeconds*1000) }

func (b *bounds) time(name string, t Time) {
	if !t.IsZero() && (t.Before(minReportTime) || !t.Before(maxReportTime)) {
		b.fail(name, "time %s is outside 1970 to 2200", t.UTC().Format(time.RFC3339))
	}
}

// all checks each element of s under name.
func all[T any](b *bounds, name string, s []T, check func(*T, *bounds)) {
	b.in(name, func(b *bounds) {
		for i := range s {
			b.in("["+strconv.Itoa(i)+"]", func(b *bounds) { check(&s[i], b) })
			if b.err != nil {
				return
			}
		}
	})
}

// keyedAll checks each value of m under name, by its quoted key.
func keyedAll[V any](b *bounds, name string, m map[string]V, check func(V, *bounds)) {
	b.in(name, func(b *bounds) {
		for k, v := range m {
			b.in(strconv.Quote(k), func(b *bounds) { check(v, b) })
			if b.err != nil {
				return
			}
		}
	})
}

// opt checks *p under name, when there is one.
func opt[T any](b *bounds, name string, p *T, check func(*T, *bounds)) {
	if p != nil {
		b.in(name, func(b *bounds) { check(p, b) })
	}
}

func eachCount[N ~int | ~int64](b *bounds, name string, s []N) {
	all(b, name, s, func(n *N, b *bounds) { b.count("", int64(*n)) })
}

func eachNumber(b *bounds, name string, s []float64) { all(b, name, s, number) }

// number and instant check one number or time, for opt and all.
func number(f *float64, b *bounds) { b.number("", *f) }
func instant(t *Time, b *bounds)   { b.time("", *t) }

func keyedCount(b *bounds, name string, m map[string]int64) {
	keyedAll(b, name, m, func(n int64, b *bounds) { b.count("", n) })
}

func (x *Report) bound(b *bounds) {
	b.count("revision", int64(x.Revision))
	b.time("started_at", x.StartedAt)
	b.time("ended_at", x.EndedAt)
	b.secs("duration_s", x.DurationS)
	b.secs("send_s", x.SendS)
	b.in("plan", x.Plan.bound)
	all(b, "dns", x.DNS, (*DNS).bound)
	b.in("totals", x.Totals.bound)
	keyedAll(b, "families", x.Families, (*Stats).bound)
	all(b, "endpoints", x.Endpoints, (*Endpoint).bound)
	all(b, "fingerprints", x.Fingerprints, (*Fingerprint).bound)
	b.in("timeline", x.Timeline.bound)
	b.in("client", x.Client.bound)
	b.in("verdict", x.Verdict.bound)
	all(b, "thresholds", x.Thresholds, (*Threshold).bound)
	all(b, "groups", x.Groups, (*Group).bound)
	opt(b, "settled", x.Settled, (*Settled).bound)
	all(b, "pauses", x.Pauses, (*Pause).bound)
	all(b, "preflight", x.Preflight, (*PreflightCheck).bound)
	all(b, "inputs", x.Inputs, (*Input).bound)
	all(b, "vantages", x.Vantages, (*VantageStats).bound)
}

func (x *Plan) bound(b *bounds) {
	b.number("rate", x.Rate)
	b.secs("duration_s", x.DurationS)
	b.count("requests", x.Requests)
	b.count("concurrency", int64(x.Concurrency))
	b.secs("timeout_s", x.Timeout)
	b.count("conn_requests", int64(x.ConnRequests))
	b.count("busy_workers", int64(x.BusyWorkers))
	b.secs("pace_grain_s", x.PaceGrainS)
}

func (x *DNS) bound(b *bounds) {
	all(b, "changes", x.Changes, (*DNSChange).bound)
	b.count("looks", x.Looks)
	opt(b, "missed", x.Missed, (*DNSMissed).bound)
}

func (x *Stats) bound(b *bounds) {
	if x == nil {
		return
	}
	b.count("requests", x.Requests)
	b.count("ok", x.OK)
	b.count("failed", x.Failed)
	b.number("failure_rate", x.FailureRate)
	b.count("dropped", x.Dropped)
	b.count("client_errors", x.ClientErrors)
	b.count("abandoned", x.Abandoned)
	b.number("rps", x.RPS)
	b.bytes("bytes", x.Bytes)
	keyedCount(b, "status", x.Status)
	keyedCount(b, "errors", x.Errors)
	b.in("latency_ms", x.LatencyMS.bound)
}

func (x *Endpoint) bound(b *bounds) {
	x.Stats.bound(b)
	opt(b, "added_at", x.AddedAt, instant)
	opt(b, "removed_at", x.RemovedAt, instant)
	all(b, "dns_history", x.DNSHistory, (*DNSEvent).bound)
	b.in("phases_ms", x.Phases.bound)
	keyedAll(b, "connections", x.Connections, ConnStats.bound)
	opt(b, "conns", x.Conns, (*Conns).bound)
	keyedCount(b, "after_failure", x.AfterFailure)
	all(b, "samples", x.Samples, (*Sample).bound)
	opt(b, "trail", x.Trail, (*Trail).bound)
	all(b, "id_ranges", x.IDRanges, (*IDRange).bound)
}

func (x *IDRange) bound(b *bounds) {
	b.count("first", x.First)
	b.count("last", x.Last)
}

func (x *Fingerprint) bound(b *bounds) {
	b.count("status", int64(x.Status))
	b.count("count", x.Count)
	b.count("fresh", x.Fresh)
	b.count("reused", x.Reused)
	keyedCount(b, "addresses", x.Addresses)
}

func (x *Timeline) bound(b *bounds) {
	b.secs("interval_s", x.IntervalS)
	b.time("start", x.Start)
	all(b, "series", x.Series, (*Series).bound)
	all(b, "families", x.Families, (*FamilySeries).bound)
	all(b, "groups", x.Groups, (*GroupSeries).bound)
}

func (x *Client) bound(b *bounds) {
	eachCount(b, "ports", x.Ports)
	b.count("ports_count", int64(x.PortsCount))
	b.count("port_min", int64(x.PortMin))
	b.count("port_max", int64(x.PortMax))
}

func (x *Verdict) bound(b *bounds) {
	all(b, "suspects", x.Suspects, (*Suspect).bound)
	all(b, "tests", x.Tests, (*Test).bound)
	all(b, "slow", x.Slow, (*SlowFinding).bound)
	all(b, "vantages", x.Vantages, (*Test).bound)
	b.in("level", x.Level.bound)
}

func (x *Threshold) bound(b *bounds) {
	b.number("limit", x.Limit)
	opt(b, "value", x.Value, number)
	b.count("requests", x.Requests)
	b.number("confidence", x.Confidence)
	opt(b, "bound", x.Bound, number)
	b.count("need_requests", x.NeedRequests)
	b.secs("need_s", x.NeedS)
	opt(b, "smallest_fault", x.SmallestFault, number)
}

func (x *Group) bound(b *bounds) {
	x.Stats.bound(b)
	keyedCount(b, "addresses", x.Addresses)
	keyedCount(b, "failed_by_address", x.FailedBy)
	all(b, "times", x.Times, (*TimeCounts).bound)
}

func (x *Settled) bound(b *bounds) {
	b.time("at", x.At)
	b.count("requests", x.Requests)
	b.count("look", int64(x.Look))
	b.count("max_looks", int64(x.MaxLooks))
	b.number("alpha", x.Alpha)
	b.count("suspects", int64(x.Suspects))
	b.count("bounded", int64(x.Bounded))
	b.number("tolerance", x.Tolerance)
	b.count("min_connections", x.MinConnections)
	b.number("reach", x.Reach)
}

func (x *Pause) bound(b *bounds) {
	b.time("at", x.At)
	b.secs("duration_s", x.DurationS)
	b.count("requests", x.Requests)
}

func (x *PreflightCheck) bound(b *bounds) {
	b.ms("connect_ms", x.ConnectMS)
	b.ms("tls_ms", x.TLSMS)
}

func (x *Input) bound(b *bounds) {
	b.count("revision", int64(x.Revision))
	b.time("started_at", x.StartedAt)
	b.time("ended_at", x.EndedAt)
	b.secs("send_s", x.SendS)
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
	b.count("dropped", x.Dropped)
}

func (x *VantageStats) bound(b *bounds) {
	b.count("runs", int64(x.Runs))
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
	b.count("dropped", x.Dropped)
	keyedAll(b, "families", x.Families, ConnStats.bound)
	all(b, "endpoints", x.Endpoints, (*VantageEndpoint).bound)
}

func (x *DNSChange) bound(b *bounds) {
	b.time("at", x.At)
}

func (x *DNSMissed) bound(b *bounds) {
	b.count("looks", x.Looks)
	b.time("first", x.First)
	b.time("last", x.Last)
}

func (x *Latency) bound(b *bounds) {
	b.ms("min", x.Min)
	b.ms("mean", x.Mean)
	b.ms("p50", x.P50)
	b.ms("p90", x.P90)
	b.ms("p99", x.P99)
	b.ms("p999", x.P999)
	b.ms("max", x.Max)
}

func (x *DNSEvent) bound(b *bounds) {
	b.time("at", x.At)
}

func (x *Phases) bound(b *bounds) {
	b.in("connect", x.Connect.bound)
	b.in("tls", x.TLS.bound)
	b.in("ttfb", x.TTFB.bound)
}

func (x ConnStats) bound(b *bounds) {
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
}

func (x *Conns) bound(b *bounds) {
	b.count("connections", x.Connections)
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
	all(b, "records", x.Records, (*ConnRecord).bound)
	b.in("overflow", x.Overflow.bound)
	b.in("unconnected", x.Unconnected.bound)
	all(b, "repeat", x.Repeat, (*RepeatCounts).bound)
	all(b, "moments", x.Moments, (*MomentCounts).bound)
	all(b, "sizes", x.Sizes, (*MomentSize).bound)
	all(b, "windows", x.Windows, (*Window).bound)
	b.count("windows_count", x.WindowsCount)
}

func (x *Sample) bound(b *bounds) {
	b.time("at", x.At)
	b.count("status", int64(x.Status))
	b.ms("latency_ms", x.LatencyMS)
	b.ms("ttfb_ms", x.TTFBMS)
}

func (x *Trail) bound(b *bounds) {
	all(b, "requests", x.Requests, (*TrailRequest).bound)
}

func (x *Series) bound(b *bounds) {
	eachCount(b, "requests", x.Requests)
	eachCount(b, "failed", x.Failed)
	opt(b, "latency", x.Latency, (*Latencies).bound)
}

func (x *FamilySeries) bound(b *bounds) {
	b.in("latency", x.Latency.bound)
}

func (x *GroupSeries) bound(b *bounds) {
	eachCount(b, "requests", x.Requests)
	eachCount(b, "failed", x.Failed)
	b.in("latency", x.Latency.bound)
}

func (x *Suspect) bound(b *bounds) {
	b.count("connections", x.Connections)
	b.count("failing_connections", x.FailingConnections)
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
	b.number("failure_rate", x.FailureRate)
	eachNumber(b, "ci95", x.CI95[:])
	b.number("p", x.P)
}

func (x *Test) bound(b *bounds) {
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
	b.number("failure_rate", x.FailureRate)
	eachNumber(b, "ci95", x.CI95[:])
	b.count("rest_failed", x.RestFailed)
	b.count("rest_requests", x.RestTotal)
	b.number("p", x.P)
}

func (x *SlowFinding) bound(b *bounds) {
	x.SlowResult.bound(b)
}

func (x *Level) bound(b *bounds) {
	b.number("alpha", x.Alpha)
	b.number("each", x.Each)
	b.count("tests", int64(x.Tests))
	b.number("slow_each", x.SlowEach)
	b.count("looks", int64(x.Looks))
}

func (x *TimeCounts) bound(b *bounds) {
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
	b.count("rest_requests", x.RestRequests)
	b.count("rest_failed", x.RestFailed)
	b.count("strata", x.Strata)
}

func (x *VantageEndpoint) bound(b *bounds) {
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
	b.count("dropped", x.Dropped)
	opt(b, "timeline", x.Timeline, (*VantageSeries).bound)
}

func (x *Phase) bound(b *bounds) {
	b.count("count", x.Count)
	b.ms("p50", x.P50)
	b.ms("p99", x.P99)
	b.ms("max", x.Max)
}

func (x *ConnRecord) bound(b *bounds) {
	b.time("first", x.First)
	b.time("last", x.Last)
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
}

func (x *ConnOverflow) bound(b *bounds) {
	b.count("connections", x.Connections)
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
}

func (x *RepeatCounts) bound(b *bounds) {
	b.count("after_failure", x.AfterFailure)
	b.count("after_failure_failed", x.AfterFailureFailed)
	b.count("after_ok", x.AfterOK)
	b.count("after_ok_failed", x.AfterOKFailed)
}

func (x *MomentCounts) bound(b *bounds) {
	x.RepeatCounts.bound(b)
	b.count("strata", x.Strata)
}

func (x *MomentSize) bound(b *bounds) {
	b.count("requests", x.Requests)
	b.count("failed", x.Failed)
	b.count("strata", x.Strata)
}

func (x *Window) bound(b *bounds) {
	b.time("from", x.From)
	b.time("to", x.To)
	b.count("requests", x.Requests)
	b.count("connections", x.Connections)
	b.count("crossing", x.Crossing)
}

func (x *TrailRequest) bound(b *bounds) {
	b.time("at", x.At)
	b.count("status", int64(x.Status))
	b.ms("latency_ms", x.LatencyMS)
}

func (x *Latencies) bound(b *bounds) {
	all(b, "counts", x.Counts, func(c *[]int64, b *bounds) { eachCount(b, "", *c) })
}

func (x *SlowResult) bound(b *bounds) {
	b.count("requests", x.Requests)
	b.count("rest_requests", x.RestRequests)
	b.ms("median_ms", x.MedianMS)
	b.ms("rest_median_ms", x.RestMedianMS)
	b.ms("p90_ms", x.P90MS)
	b.ms("rest_p90_ms", x.RestP90MS)
	b.ms("p99_ms", x.P99MS)
	b.ms("rest_p99_ms", x.RestP99MS)
	b.number("ratio", x.Ratio)
	b.number("share", x.Share)
	b.number("superiority", x.Superiority)
	b.number("p", x.P)
}

func (x *VantageSeries) bound(b *bounds) {
	b.count("first", int64(x.First))
	eachCount(b, "requests", x.Requests)
	eachCount(b, "failed", x.Failed)
}
