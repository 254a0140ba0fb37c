package collect_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
)

// want is a test's own tally of what it fed an endpoint.
type want struct {
	requests, ok, failed, dropped int64
	status                        map[string]int64
	errors                        map[string]int64
	min, max                      time.Duration
}

func newWant() *want { return &want{status: map[string]int64{}, errors: map[string]int64{}} }

func (w *want) add(o *want) {
	if o.requests > 0 && (w.requests == 0 || o.min < w.min) {
		w.min = o.min
	}
	w.max = max(w.max, o.max)
	w.requests += o.requests
	w.ok += o.ok
	w.failed += o.failed
	w.dropped += o.dropped
	for k, v := range o.status {
		w.status[k] += v
	}
	for k, v := range o.errors {
		w.errors[k] += v
	}
}

// TestAggregatorAccounting feeds random-ish results (fixed seed) to an
// Aggregator and checks every figure of the report against the test's own
// tally, and the invariants: requests == ok + failed, endpoints sum to their
// family, families to the totals, percentiles in order, histograms that
// decode to the request count.
func TestAggregatorAccounting(t *testing.T) {
	t.Parallel() // CPU-bound: let it share the cores with the others
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { checkAccounting(t, seed) })
	}
}

func checkAccounting(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	a := fixture.MustTarget(t, "https://a.example.com/")
	b := fixture.MustTarget(t, "http://b.example.com:8080/x")
	eps := []*probe.Endpoint{
		{ID: 0, Target: a, Addr: netip.MustParseAddr("192.0.2.1")},
		{ID: 1, Target: a, Addr: netip.MustParseAddr("192.0.2.2")},
		{ID: 2, Target: a, Addr: netip.MustParseAddr("2001:db8::1")},
		{ID: 3, Target: b, Addr: netip.MustParseAddr("198.51.100.9")},
		{ID: 4, Target: b, Addr: netip.MustParseAddr("2001:db8::9")},
		{ID: 5, Target: b, Addr: netip.MustParseAddr("2001:db8::10")}, // never gets a request
	}
	fail, err := report.ParseFailStatus("5xx,429")
	if err != nil {
		t.Fatal(err)
	}
	agg := collect.NewAggregator(eps)
	wants := make([]*want, len(eps))
	for i := range wants {
		wants[i] = newWant()
	}
	statuses := []int{200, 200, 200, 204, 301, 404, 429, 500, 502, 503}
	classes := []probe.ErrorClass{probe.ClassReset, probe.ClassEOF, probe.ClassTimeout, probe.ClassConnectRefused,
		probe.ClassTLS, probe.ClassProtocol, probe.ClassOther}
	start := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	for i := range 20000 {
		ep := rng.IntN(len(eps) - 1)
		w := wants[ep]
		r := probe.Result{Endpoint: ep, Start: start.Add(time.Duration(i) * time.Millisecond)}
		switch p := rng.Float64(); {
		case p < 0.03:
			r.Dropped = 1 + rng.IntN(5)
			w.dropped += int64(r.Dropped)
			agg.Add(fixture.Decide(fail, r))
			continue
		case p < 0.15:
			r.Class = classes[rng.IntN(len(classes))]
			r.Err = errors.New(string(r.Class))
			w.errors[string(r.Class)]++
			w.failed++
		default:
			r.Status = statuses[rng.IntN(len(statuses))]
			w.status[strconv.Itoa(r.Status)]++
			if r.Status == 429 || r.Status >= 500 {
				w.failed++
			} else {
				w.ok++
			}
		}
		// Latencies from below a microsecond to minutes, most around a few ms.
		switch q := rng.Float64(); {
		case q < 0.01:
			r.Latency = time.Duration(rng.IntN(1000)) // < 1µs, even 0
		case q < 0.02:
			r.Latency = time.Duration(rng.Int64N(int64(3 * time.Minute)))
		default:
			r.Latency = time.Duration(rng.ExpFloat64() * float64(4*time.Millisecond))
		}
		if w.requests == 0 || r.Latency < w.min {
			w.min = r.Latency
		}
		w.max = max(w.max, r.Latency)
		w.requests++
		agg.Add(fixture.Decide(fail, r))
	}
	rep := fixture.CloseJudged(agg, &report.Report{StartedAt: report.Time{Time: start}, EndedAt: report.Time{Time: start.Add(20 * time.Second)}})

	if rep.Schema != report.Schema {
		t.Errorf("schema = %q; want %q", rep.Schema, report.Schema)
	}
	fams := map[string]*want{}
	total := newWant()
	for i, e := range rep.Endpoints {
		w := wants[i]
		scope := "endpoint " + e.Address
		checkAgainst(t, scope, &e.Stats, w)
		if e.Address != eps[i].Addr.String() || e.Family != string(eps[i].Family()) || e.Target != eps[i].Target.String() ||
			e.Host != eps[i].Target.Host() || e.Port != eps[i].Target.Port() {
			t.Errorf("%s: %+v; identity does not match %v", scope, e, eps[i])
		}
		if fams[e.Family] == nil {
			fams[e.Family] = newWant()
		}
		fams[e.Family].add(w)
		total.add(w)
	}
	if got := slices.Sorted(maps.Keys(rep.Families)); !slices.Equal(got, []string{"ipv4", "ipv6"}) {
		t.Errorf("families %v; want ipv4, ipv6", got)
	}
	for fam, w := range fams {
		checkAgainst(t, "families."+fam, rep.Families[fam], w)
	}
	checkAgainst(t, "totals", &rep.Totals, total)

	live := agg.Live()
	if live.Requests.Load() != total.requests || live.Failed.Load() != total.failed || live.Dropped.Load() != total.dropped {
		t.Errorf("live counts %d/%d/%d; want requests/failed/dropped %d/%d/%d",
			live.Requests.Load(), live.Failed.Load(), live.Dropped.Load(), total.requests, total.failed, total.dropped)
	}
	for fam, w := range fams {
		f := probe.Family(fam)
		if live.FamilyRequests[f].Load() != w.requests || live.FamilyFailed[f].Load() != w.failed {
			t.Errorf("live %s: %d requests, %d failed; want %d, %d", fam,
				live.FamilyRequests[f].Load(), live.FamilyFailed[f].Load(), w.requests, w.failed)
		}
	}
	if e := rep.Endpoints[5]; e.Requests != 0 || e.FailureRate != 0 || e.LatencyMS != (report.Latency{}) {
		t.Errorf("endpoint without requests: %+v; want zero figures", e.Stats)
	}
}

// checkAgainst compares one scope's Stats with the test's tally and checks
// its invariants.
func checkAgainst(t *testing.T, scope string, s *report.Stats, w *want) {
	t.Helper()
	if s == nil {
		t.Errorf("%s: missing", scope)
		return
	}
	if s.Requests != w.requests || s.OK != w.ok || s.Failed != w.failed || s.Dropped != w.dropped {
		t.Errorf("%s: requests/ok/failed/dropped = %d/%d/%d/%d; want %d/%d/%d/%d", scope,
			s.Requests, s.OK, s.Failed, s.Dropped, w.requests, w.ok, w.failed, w.dropped)
	}
	if s.Requests != s.OK+s.Failed {
		t.Errorf("%s: requests %d != ok %d + failed %d", scope, s.Requests, s.OK, s.Failed)
	}
	if !maps.Equal(s.Status, w.status) {
		t.Errorf("%s: status = %v; want %v", scope, s.Status, w.status)
	}
	if !maps.Equal(s.Errors, w.errors) {
		t.Errorf("%s: errors = %v; want %v", scope, s.Errors, w.errors)
	}
	if s.Requests > 0 {
		if want := stat.Round(float64(w.failed)/float64(w.requests), 6); s.FailureRate != want {
			t.Errorf("%s: failure_rate = %v; want %v", scope, s.FailureRate, want)
		}
		l := s.LatencyMS
		if l.Min != report.Millis(w.min) || l.Max != report.Millis(w.max) {
			t.Errorf("%s: latency min %v max %v; want %v, %v", scope, l.Min, l.Max, report.Millis(w.min), report.Millis(w.max))
		}
		if seq := []float64{l.Min, l.P50, l.P90, l.P99, l.P999, l.Max}; !slices.IsSorted(seq) {
			t.Errorf("%s: latency min %v p50 %v p90 %v p99 %v p999 %v max %v; want them in order",
				scope, l.Min, l.P50, l.P90, l.P99, l.P999, l.Max)
		}
		if l.Mean < l.Min || l.Mean > l.Max {
			t.Errorf("%s: latency mean %v outside [%v, %v]", scope, l.Mean, l.Min, l.Max)
		}
	}
	h, err := report.DecodeHDR(s.HDR)
	if err != nil {
		t.Errorf("%s: hdr: %v", scope, err)
		return
	}
	if h.TotalCount() != s.Requests {
		t.Errorf("%s: hdr holds %d values; want %d", scope, h.TotalCount(), s.Requests)
	}
	if s.Requests > 0 {
		// The histogram agrees with the exact extremes to its precision (0.1%, whole µs).
		if got, want := float64(h.Max())/1000, s.LatencyMS.Max; got < want*0.999-0.001 || got > want*1.001+0.001 {
			t.Errorf("%s: hdr max %vms; want about %vms", scope, got, want)
		}
	}
}

// TestHDRMergesExactly: the histograms of a report's endpoints, decoded and
// merged, equal its family and total histograms.
func TestHDRMergesExactly(t *testing.T) {
	rep := fixture.GoldenReport(t)
	byFam := map[string][]string{}
	var all []string
	for _, e := range rep.Endpoints {
		byFam[e.Family] = append(byFam[e.Family], e.HDR)
		all = append(all, e.HDR)
	}
	check := func(scope string, parts []string, whole string) {
		t.Helper()
		merged := report.NewHist()
		for _, p := range parts {
			h, err := report.DecodeHDR(p)
			if err != nil {
				t.Fatalf("%s: %v", scope, err)
			}
			merged.Merge(h)
		}
		w, err := report.DecodeHDR(whole)
		if err != nil {
			t.Fatalf("%s: %v", scope, err)
		}
		if !merged.Equals(w) {
			t.Errorf("%s: merged endpoint histograms differ from its own (%d vs %d values)", scope, merged.TotalCount(), w.TotalCount())
		}
	}
	for fam, parts := range byFam {
		check("families."+fam, parts, rep.Families[fam].HDR)
	}
	check("totals", all, rep.Totals.HDR)
}

// TestLatencySummaryInOrder: with few requests the histogram's answer (the
// top of a bucket, or whole microseconds) must not put a percentile above
// the exact max or below the exact min.
func TestLatencySummaryInOrder(t *testing.T) {
	tests := [][]time.Duration{
		{50287100 * time.Nanosecond},                           // bucket top 50.303ms > max 50.287ms
		{456700 * time.Nanosecond},                             // whole µs 0.456ms < min 0.457ms
		{3 * time.Millisecond, 50287100 * time.Nanosecond},     // p99 and p999 land on the max
		{456700 * time.Nanosecond, 2 * time.Second, time.Hour}, // and the histogram's upper bound
		{0, 1, 999}, // below a microsecond
		{2*time.Hour + 1, 2 * time.Hour, 90 * time.Millisecond}, // beyond the histogram's range
	}
	for _, lats := range tests {
		ep := &probe.Endpoint{ID: 0, Target: fixture.MustTarget(t, "http://a.example.com/"), Addr: netip.MustParseAddr("192.0.2.1")}
		fail, _ := report.ParseFailStatus("5xx")
		agg := collect.NewAggregator([]*probe.Endpoint{ep})
		for _, l := range lats {
			agg.Add(fixture.Decide(fail, probe.Result{Endpoint: 0, Status: 200, Latency: l}))
		}
		rep := fixture.CloseJudged(agg, &report.Report{})
		l := rep.Totals.LatencyMS
		if seq := []float64{l.Min, l.P50, l.P90, l.P99, l.P999, l.Max}; !slices.IsSorted(seq) {
			t.Errorf("latencies %v: min %v p50 %v p90 %v p99 %v p999 %v max %v; want them in order",
				lats, l.Min, l.P50, l.P90, l.P99, l.P999, l.Max)
		}
		if want := report.Millis(slices.Max(lats)); l.Max != want {
			t.Errorf("latencies %v: max %v; want %v", lats, l.Max, want)
		}
	}
}
