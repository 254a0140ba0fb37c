package merge

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
	"github.com/pinprobe/pinprobe/internal/words"
)

// DefaultSamples is the --samples default: failed requests kept per
// endpoint when the command does not say.
const DefaultSamples = 5

// maxMergedInterval bounds the common timeline interval of a merge; past it
// the inputs' intervals have no sensible common multiple.
const maxMergedInterval = 24 * time.Hour

// Merge combines reports of one run's processes (N machines, N pods each at
// R/N), or of several runs, into one report, exactly where they allow it; names
// name the inputs for errors. The reports must pass report.CheckSaved and count
// the same statuses as failures. Endpoints match by target and address and add
// up, histograms merged from their encoding one scope at a time (memory grows
// with the inputs, not with the scopes); families and totals are recomputed, and
// nothing is judged. Each part follows the rule its function states (meta,
// plan, endpoints, keepSamples, timeline, grid, fingerprints, client,
// mergeVantages); a run among the inputs twice is refused (sameRun).
func Merge(reports []*report.Report, names []string) (*report.Report, error) {
	if len(reports) == 0 {
		return nil, errors.New("merge: no report to merge")
	}
	if len(names) != len(reports) {
		return nil, fmt.Errorf("merge: %d reports but %d names", len(reports), len(names))
	}
	for i, r := range reports {
		if r == nil {
			return nil, fmt.Errorf("merge %s: no report", names[i])
		}
		if err := report.CheckSaved(r); err != nil {
			return nil, fmt.Errorf("merge %s: %w", names[i], err)
		}
	}
	fail0 := report.FailStatusOf(reports[0])
	for i, r := range reports[1:] {
		if f := report.FailStatusOf(r); !f.Equal(fail0) {
			return nil, fmt.Errorf("merge %s: its --fail-status %q differs from %q in %s: the same answer would count as a failure in one and not in the other",
				names[i+1], report.Shown(r.Plan.FailStatus), report.Shown(reports[0].Plan.FailStatus), names[0])
		}
	}
	m := &merger{reports: reports, names: names, index: map[report.EpKey]int{}}
	out := &report.Report{Schema: report.Schema, Revision: report.Revision}
	m.meta(out)
	if err := sameRun(m.inputs, m.hists); err != nil {
		return nil, err
	}
	if err := m.endpoints(); err != nil {
		return nil, err
	}
	err := m.stats(out)
	if err != nil {
		return nil, err
	}
	if out.Groups, err = m.groups(); err != nil {
		return nil, err
	}
	tl, err := m.timeline(out)
	if err != nil {
		return nil, err
	}
	out.Timeline = tl
	out.Fingerprints = m.fingerprints()
	for _, r := range m.reports {
		if out.ClientError == "" {
			out.ClientError = r.ClientError
		}
	}
	out.Client, err = m.client()
	if err != nil {
		return nil, err
	}
	out.Pauses = mergePauses(reports)
	out.Vantages = mergeVantages(reports, out, m.vtl)
	out.Notes = append(out.Notes, m.notes...)
	out.Thresholds = []report.Threshold{} // judged at report time, on the merged counts
	if err := report.Validate(out); err != nil {
		return nil, fmt.Errorf("merge %s: the merged report breaks its invariants: %w", strings.Join(names, ", "), err)
	}
	return out, nil
}

// mergePauses lists the inputs' pauses in time order; past report.MaxPauses the
// last holds every later one too (their requests, and up to the end of the
// last), as in a run's own report.
func mergePauses(reports []*report.Report) []report.Pause {
	var out []report.Pause
	for _, r := range reports {
		out = append(out, r.Pauses...)
	}
	slices.SortStableFunc(out, func(a, b report.Pause) int { return a.At.Compare(b.At.Time) })
	if len(out) <= report.MaxPauses {
		return out
	}
	last := &out[report.MaxPauses-1]
	end := last.At.Add(time.Duration(last.DurationS * float64(time.Second)))
	for _, p := range out[report.MaxPauses:] {
		last.Requests += p.Requests
		if e := p.At.Add(time.Duration(p.DurationS * float64(time.Second))); e.After(end) {
			end = e
		}
	}
	last.DurationS = stat.Round(end.Sub(last.At.Time).Seconds(), 3)
	return out[:report.MaxPauses]
}

// merger holds a merge in progress.
type merger struct {
	reports []*report.Report
	names   []string
	inputs  []report.Input // flattened
	// hists are the inputs' latency histograms (Totals.HDR), to tell runs
	// without an ID apart: "" for an input of a merged input, which keeps
	// none.
	hists []string
	index map[report.EpKey]int
	eps   []*mergedEndpoint
	notes []string
	secs  float64 // the sending window every rps is over
	// vtl is each vantage's timeline of each endpoint, on the merged
	// grid; nil when no input names a vantage or the merge has no timeline.
	vtl *vantageTimelines
	// parts: every input is a part of one run (a watch's windows), so the
	// merged endpoints say which of its request IDs they count.
	parts bool
}

// mergedEndpoint is one endpoint's sum over the inputs.
type mergedEndpoint struct {
	id                 report.Endpoint // identity: target, host, address, port, family
	sum                *report.StatsSum
	phases             [3]phaseAcc // connect, TLS, TTFB
	fresh, reused      report.ConnStats
	samples            []report.Sample
	seen, nAdd, nRem   int
	addedAt, removedAt time.Time
	history            []report.DNSEvent
	conns              *report.Conns
	afterFailure       map[string]int64
	trails             []*report.Trail
	idRanges           [][]report.IDRange
}

// meta fills what describes the run: inputs (a merged input's own inputs in
// its place, so merges of merges stay flat), plan, version, command, DNS (every
// input's entries, each naming its input) and interrupted (any input's). Time:
// started_at the earliest, ended_at the latest; duration_s and send_s the time
// covered by at least one input's window, so side-by-side processes give the
// common window (every rps the combined rate) and runs in turn the sum.
func (m *merger) meta(out *report.Report) {
	var runs, sends [][2]time.Time
	for i, r := range m.reports {
		inputs, hists := runsOf(r, m.names[i])
		m.inputs, m.hists = append(m.inputs, inputs...), append(m.hists, hists...)
		if len(r.Inputs) > 0 {
			for _, n := range r.Notes {
				m.notes = append(m.notes, m.names[i]+": "+n)
			}
		} else {
			m.notes = append(m.notes, r.Notes...) // what reading it left out, named already
			if r.NotProbed != "" {
				m.notes = append(m.notes, m.names[i]+" probed nothing: "+r.NotProbed)
			}
		}
		for _, d := range r.DNS {
			d.Addresses = slices.Clone(d.Addresses)
			d.Changes = slices.Clone(d.Changes)
			if d.Input == "" {
				d.Input = m.names[i]
			} else {
				d.Input = m.names[i] + ":" + d.Input
			}
			out.DNS = append(out.DNS, d)
		}
	}
	if out.DNS == nil {
		out.DNS = []report.DNS{}
	}
	var versions []string
	sameCommand := true
	for _, in := range m.inputs {
		versions = append(versions, in.Version)
		sameCommand = sameCommand && slices.Equal(in.Command, m.inputs[0].Command)
		out.Interrupted = out.Interrupted || in.Interrupted
		if in.StartedAt.IsZero() {
			continue
		}
		if out.StartedAt.IsZero() || in.StartedAt.Before(out.StartedAt.Time) {
			out.StartedAt = in.StartedAt
		}
		if in.EndedAt.After(out.EndedAt.Time) {
			out.EndedAt = in.EndedAt
		}
		send := report.SecondsDuration(in.SendS)
		if in.SendS <= 0 {
			send = in.EndedAt.Sub(in.StartedAt.Time)
		}
		runs = append(runs, [2]time.Time{in.StartedAt.Time, in.EndedAt.Time})
		sends = append(sends, [2]time.Time{in.StartedAt.Time, in.StartedAt.Add(send)})
	}
	out.Version = strings.Join(words.Dedupe(versions), ", ")
	out.Command = []string{}
	if sameCommand {
		out.Command = slices.Clone(m.inputs[0].Command)
	}
	out.DurationS = stat.Round(unionSeconds(runs), 3)
	m.secs = unionSeconds(sends)
	out.SendS = m.secs
	out.Plan = m.plan()
	out.Inputs = m.inputs
}

// runsOf lists the runs r holds, as a merged report lists its inputs: r
// itself, named name, or each input of a merged r, named "name:input";
// and beside each its latency histogram (Totals.HDR), "" for an input of a
// merged report, which keeps none.
func runsOf(r *report.Report, name string) ([]report.Input, []string) {
	if len(r.Inputs) == 0 {
		return []report.Input{{
			File: name, Version: r.Version, Revision: report.RevisionOf(r.Revision), RunID: r.RunID, Vantage: r.Vantage, Command: r.Command, StartedAt: r.StartedAt, EndedAt: r.EndedAt,
			SendS: r.SendS, Interrupted: r.Interrupted,
			Requests: r.Totals.Requests, Failed: r.Totals.Failed, Dropped: r.Totals.Dropped, Part: r.Part,
		}}, []string{r.Totals.HDR}
	}
	inputs := make([]report.Input, len(r.Inputs))
	for i, in := range r.Inputs {
		in.File = name + ":" + in.File
		inputs[i] = in
	}
	return inputs, make([]string, len(inputs))
}

// SameRunError says that one run is among reports twice: Second is the
// run First is, Why how they were told to be one ("run 0123abcd").
type SameRunError struct {
	First, Second report.Input
	Why           string
}

// Error says it as merge does: "merge b.json: the same run as a.json (run
// 0123abcd): its requests would count twice".
func (e *SameRunError) Error() string {
	return "merge " + e.Words() + ": its requests would count twice"
}

// Words names the two and why they are one run, for any command's own
// sentence: "a.json: given twice (run 0123abcd)", "b.json: the same run
// as a.json (run 0123abcd)".
func (e *SameRunError) Words() string {
	if e.First.File == e.Second.File {
		return fmt.Sprintf("%s: given twice (%s)", e.Second.File, e.Why)
	}
	return fmt.Sprintf("%s: the same run as %s (%s)", e.Second.File, e.First.File, e.Why)
}

// SameRun returns a *SameRunError when one run is among reports twice,
// names naming them: the same file given twice, a copy of one, a merged
// report and one of its own inputs, or two merged reports that share an
// input. Merge refuses such reports, and so does compare: the one decision
// of what is the same run (see sameRun).
func SameRun(reports []*report.Report, names []string) error {
	var inputs []report.Input
	var hists []string
	for i, r := range reports {
		in, h := runsOf(r, names[i])
		inputs, hists = append(inputs, in...), append(hists, h...)
	}
	return sameRun(inputs, hists)
}

// sameRun refuses a run that is among the inputs twice — the same file
// given twice, a copy of one, or a merged report and one of its own inputs
// — which would count its requests twice and could make a verdict of them
// (a run judged spread, merged six times with itself, is concentrated).
// Runs are told apart by their run ID. A report written before reports
// carried one is the same run as another when it started and ended at the
// same moment, with the same version, command and counts, and the same
// latency histogram where both inputs keep theirs (hists[i], "" when not).
func sameRun(inputs []report.Input, hists []string) error {
	type content struct {
		start, end                int64
		send                      float64
		requests, failed, dropped int64
		version, command          string
	}
	byID := map[string][]int{}
	byContent := map[content][]int{}
	for i, in := range inputs {
		if in.RunID != "" {
			for _, j := range byID[in.RunID] {
				// Parts of one run (a watch's windows) are apart when
				// their times are.
				if o := inputs[j]; !in.Part || !o.Part || in.StartedAt.Before(o.EndedAt.Time) && o.StartedAt.Before(in.EndedAt.Time) {
					return &SameRunError{o, in, "run " + in.RunID}
				}
			}
			byID[in.RunID] = append(byID[in.RunID], i)
		}
		k := content{in.StartedAt.UnixNano(), in.EndedAt.UnixNano(), in.SendS, in.Requests, in.Failed, in.Dropped,
			in.Version, strings.Join(in.Command, "\x00")}
		for _, j := range byContent[k] {
			if (inputs[j].RunID == "" || in.RunID == "") && (hists[i] == hists[j] || hists[i] == "" || hists[j] == "") {
				return &SameRunError{inputs[j], in, "no run ID, and the same start, end, command, counts and latencies"}
			}
		}
		byContent[k] = append(byContent[k], i)
	}
	return nil
}

// partsOfOneRun says whether every input is a part of one run, with its
// run ID.
func partsOfOneRun(inputs []report.Input) bool {
	for _, in := range inputs {
		if !in.Part || in.RunID == "" || in.RunID != inputs[0].RunID {
			return false
		}
	}
	return len(inputs) > 0
}

// unionSeconds is how long at least one of the intervals covers.
func unionSeconds(iv [][2]time.Time) float64 {
	iv = slices.Clone(iv)
	sort.Slice(iv, func(i, j int) bool { return iv[i][0].Before(iv[j][0]) })
	var total time.Duration
	var cur [2]time.Time
	for i, v := range iv {
		switch {
		case i == 0:
			cur = v
		case v[0].After(cur[1]):
			total += cur[1].Sub(cur[0])
			cur = v
		case v[1].After(cur[1]):
			cur[1] = v[1]
		}
	}
	if len(iv) > 0 {
		total += cur[1].Sub(cur[0])
	}
	return total.Seconds()
}

// plan sums the rates where the runs overlap (peakRate) and the budgets, keeps
// the largest duration, concurrency and timeout and every input's --group-by
// headers once; a note says when the inputs' plans differ.
func (m *merger) plan() report.Plan {
	p := m.reports[0].Plan
	p.Rate, p.Requests = peakRate(m.reports), 0
	unlimited := false
	var groupBy []string
	var differ []string
	for _, r := range m.reports {
		q := r.Plan
		p.Max = p.Max || q.Max
		p.Requests += q.Requests
		unlimited = unlimited || q.Requests == 0
		p.DurationS = max(p.DurationS, q.DurationS)
		p.Concurrency = max(p.Concurrency, q.Concurrency)
		p.Timeout = max(p.Timeout, q.Timeout)
		p.NewConn = p.NewConn || q.NewConn
		groupBy = append(groupBy, q.GroupBy...)
		if q.Only != p.Only {
			p.Only = "" // one input probed both families
		}
		f := m.reports[0].Plan
		for _, d := range []struct {
			name string
			same bool
		}{
			{"rate", q.Rate == f.Rate && q.Max == f.Max}, {"duration_s", q.DurationS == f.DurationS},
			{"requests", q.Requests == f.Requests}, {"concurrency", q.Concurrency == f.Concurrency},
			{"timeout_s", q.Timeout == f.Timeout}, {"http", q.HTTP == f.HTTP}, {"new_conn", q.NewConn == f.NewConn},
		} {
			if !d.same {
				differ = append(differ, d.name)
			}
		}
	}
	p.Rate = stat.Round(p.Rate, 6)
	p.GroupBy = nil
	if groupBy = words.Dedupe(groupBy); len(groupBy) > 0 {
		p.GroupBy = groupBy[:min(len(groupBy), report.MaxGroupBy)]
	}
	if unlimited {
		p.Requests = 0
	}
	if differ = words.Dedupe(differ); len(differ) > 0 {
		m.notes = append(m.notes, "plan: the inputs were run with different "+strings.Join(differ, ", ")+
			"; the plan shows their summed rates and request budgets, the longest duration, the largest concurrency and timeout, new_conn if any used it, and the first input's http")
	}
	return p
}

// peakRate is the planned rate at the busiest moment: the sum of the rates
// of the reports that ran at the same time (all of them when their times
// are unknown).
func peakRate(reports []*report.Report) float64 {
	type edge struct {
		at   time.Time
		rate float64
	}
	var edges []edge
	sum := 0.0
	for _, r := range reports {
		if r.StartedAt.IsZero() || r.EndedAt.Before(r.StartedAt.Time) {
			sum += r.Plan.Rate
			continue
		}
		edges = append(edges, edge{r.StartedAt.Time, r.Plan.Rate}, edge{r.EndedAt.Time, -r.Plan.Rate})
	}
	// Ends before starts at the same instant: back-to-back runs do not overlap.
	sort.SliceStable(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].rate < edges[j].rate
	})
	cur, peak := 0.0, 0.0
	for _, e := range edges {
		cur += e.rate
		peak = max(peak, cur)
	}
	return sum + peak
}

// endpoints adds up the inputs' endpoints, matched by target and address;
// the others are listed side by side in the order they first appear. A
// phase without its histogram merges approximately, and a note says so;
// trails are merged in time order, thinned past report.MaxTrailFailed and
// MaxTrailOK (report.MergeTrails).
func (m *merger) endpoints() error {
	m.parts = partsOfOneRun(m.inputs)
	if !m.parts && slices.ContainsFunc(m.inputs, func(in report.Input) bool { return in.Part }) {
		m.notes = append(m.notes, "id_ranges: some inputs are windows of a watch, and not all of one watch: "+
			"pinprobe logs takes every request of their runs in a gateway's log for the merged report's, "+
			"not only the windows' (merge the windows of one watch to keep them apart)")
	}
	approx := map[string]bool{}
	quota := 0
	for _, in := range m.inputs {
		quota = max(quota, SamplesFlag(in.Command))
	}
	for i, r := range m.reports {
		for j := range r.Endpoints {
			e := &r.Endpoints[j]
			k := report.KeyOf(e)
			idx, ok := m.index[k]
			if !ok {
				idx = len(m.eps)
				m.index[k] = idx
				id := report.Endpoint{Target: e.Target, Host: e.Host, Address: e.Address, Port: e.Port, Family: e.Family}
				m.eps = append(m.eps, &mergedEndpoint{id: id, sum: report.NewStatsSum()})
			}
			me := m.eps[idx]
			me.sum.Add(&e.Stats)
			for p, ph := range []report.Phase{e.Phases.Connect, e.Phases.TLS, e.Phases.TTFB} {
				if !me.phases[p].add(ph) {
					approx[m.names[i]] = true
				}
			}
			f, rs := e.Connections["fresh"], e.Connections["reused"]
			me.fresh.Requests += f.Requests
			me.fresh.Failed += f.Failed
			me.reused.Requests += rs.Requests
			me.reused.Failed += rs.Failed
			failed := 0
			for _, s := range e.Samples {
				if s.Failed {
					failed++
				}
			}
			quota = max(quota, failed)
			me.samples = append(me.samples, e.Samples...)
			me.seen++
			if e.AddedAt != nil {
				me.nAdd++
				if me.addedAt.IsZero() || e.AddedAt.Before(me.addedAt) {
					me.addedAt = e.AddedAt.Time
				}
			}
			if e.RemovedAt != nil {
				me.nRem++
				if e.RemovedAt.After(me.removedAt) {
					me.removedAt = e.RemovedAt.Time
				}
			}
			me.history = append(me.history, e.DNSHistory...)
			me.conns = mergeConns(me.conns, e.Conns)
			me.trails = append(me.trails, e.Trail)
			me.idRanges = append(me.idRanges, e.IDRanges)
			for k, n := range e.AfterFailure {
				if me.afterFailure == nil {
					me.afterFailure = map[string]int64{}
				}
				me.afterFailure[k] += n
			}
		}
	}
	for _, me := range m.eps {
		me.samples = keepSamples(me.samples, quota)
	}
	if len(approx) > 0 {
		m.notes = append(m.notes, "phases_ms: no phase histograms in "+strings.Join(slices.Sorted(maps.Keys(approx)), ", ")+
			" (written before phases_ms carried hdr), so the phases of the endpoints found there are approximate: "+
			"count and max are exact, p50 is the count-weighted mean of the inputs' p50s and p99 the largest of their p99s (an upper bound)")
	}
	return nil
}

// keepSamples keeps the earliest quota failed samples (quota: the largest
// --samples of the inputs, SamplesFlag) and the earliest success, in time
// order, as one run would have.
func keepSamples(all []report.Sample, quota int) []report.Sample {
	sort.SliceStable(all, func(i, j int) bool { return all[i].At.Before(all[j].At.Time) })
	out := []report.Sample{}
	failed, ok := 0, false
	for _, s := range all {
		switch {
		case s.Failed && failed < quota:
			failed++
		case !s.Failed && !ok:
			ok = true
		default:
			continue
		}
		out = append(out, s)
	}
	return out
}

// SamplesFlag reads --samples from a command line as pflag would (the last
// one wins); DefaultSamples when it is not there.
func SamplesFlag(cmd []string) int {
	n := DefaultSamples
	for i, a := range cmd {
		v, ok := "", false
		switch {
		case a == "--":
			return n
		case a == "--samples" && i+1 < len(cmd):
			v, ok = cmd[i+1], true
		case strings.HasPrefix(a, "--samples="):
			v, ok = strings.TrimPrefix(a, "--samples="), true
		}
		if k, err := strconv.Atoi(v); ok && err == nil && k >= 0 {
			n = k
		}
	}
	return n
}

// phaseAcc adds up one phase over the inputs: exactly from histograms (the
// inputs' encodings, decoded when the phase is written), or approximately
// when an input has none.
type phaseAcc struct {
	hdrs     []string
	count    int64
	max, p99 float64
	p50sum   float64 // p50 × count, for the approximation
	approx   bool
}

// add counts p in; exact reports whether it came with its histogram.
func (a *phaseAcc) add(p report.Phase) (exact bool) {
	if p.Count == 0 {
		return true
	}
	a.count += p.Count
	a.max = max(a.max, p.Max)
	a.p99 = max(a.p99, p.P99)
	a.p50sum += p.P50 * float64(p.Count)
	if p.HDR == "" {
		a.approx = true
		return false
	}
	a.hdrs = append(a.hdrs, p.HDR)
	return true
}

// phase writes the merged phase, decoding its histograms into h (of
// report.NewPhaseTimes, emptied first).
func (a *phaseAcc) phase(h *report.Hist) (report.Phase, error) {
	switch {
	case a.count == 0:
		return report.Phase{}, nil
	case a.approx:
		return report.Phase{Count: a.count, P50: stat.Round(a.p50sum/float64(a.count), 3), P99: a.p99, Max: a.max}, nil
	}
	h.Reset()
	for _, enc := range a.hdrs {
		if err := h.Add(enc); err != nil {
			return report.Phase{}, err
		}
	}
	p := report.PhaseSummary(h)
	p.HDR = report.Reencode(h, a.hdrs)
	return p, nil
}

// stats writes the endpoints, families and totals from the merged sums, as
// Aggregator.Close does. Each endpoint's histograms are decoded into the
// same scratch histograms, one endpoint at a time, and added to its
// family's and the total's, each holding only the buckets in use, so the
// work is linear in the endpoints and their buckets.
func (m *merger) stats(out *report.Report) error {
	total := report.NewStatsSum()
	totalH := report.NewLatencyHist()
	fams := map[string]*report.StatsSum{}
	famH := map[string]*report.Hist{}
	h, ph := report.NewLatencyHist(), report.NewPhaseTimes()
	out.Endpoints = make([]report.Endpoint, len(m.eps))
	for i, me := range m.eps {
		e := me.id
		fail := func(err error) error {
			return fmt.Errorf("merge: endpoint %s (%s): %w", e.Address, e.Target, err)
		}
		if err := me.sum.Hist(h); err != nil {
			return fail(err)
		}
		total.AddSum(me.sum)
		totalH.Merge(h)
		if fams[e.Family] == nil {
			fams[e.Family], famH[e.Family] = report.NewStatsSum(), report.NewLatencyHist()
		}
		fams[e.Family].AddSum(me.sum)
		famH[e.Family].Merge(h)
		e.Stats = me.sum.Stats(h, m.secs)
		for p, dst := range []*report.Phase{&e.Phases.Connect, &e.Phases.TLS, &e.Phases.TTFB} {
			var err error
			if *dst, err = me.phases[p].phase(ph); err != nil {
				return fail(err)
			}
		}
		me.sum, me.phases = nil, [3]phaseAcc{} // written: let its inputs' strings go
		e.Connections = map[string]report.ConnStats{"fresh": me.fresh, "reused": me.reused}
		e.Samples = me.samples
		// An endpoint appeared (or left) only if it did in every input
		// that probed it.
		if me.nAdd == me.seen {
			e.AddedAt = &report.Time{Time: me.addedAt}
		}
		if me.nRem == me.seen {
			e.RemovedAt = &report.Time{Time: me.removedAt}
		}
		slices.SortStableFunc(me.history, func(a, b report.DNSEvent) int { return a.At.Compare(b.At.Time) })
		e.DNSHistory = me.history
		e.Conns, e.AfterFailure = me.conns, me.afterFailure
		e.Trail = report.MergeTrails(me.trails)
		if m.parts {
			e.IDRanges = report.MergeIDRanges(me.idRanges...)
			out.Part = true
		}
		out.Endpoints[i] = e
	}
	out.Totals = total.Stats(totalH, m.secs)
	out.Families = map[string]*report.Stats{}
	for fam, f := range fams {
		s := f.Stats(famH[fam], m.secs)
		out.Families[fam] = &s
	}
	return nil
}

// timeline re-buckets every input's series on one grid (see grid): an input
// bucket is never split but counted whole where its middle falls, exact when
// the input starts a whole number of its buckets from the origin, else a note
// names it (its requests up to half a bucket early or late); sums are always
// exact. So are the latency series of out's families, endpoints and groups.
func (m *merger) timeline(out *report.Report) (report.Timeline, error) {
	srcs, none := m.timelineSources()
	if none != nil {
		return *none, nil
	}
	tl := report.Timeline{IntervalS: m.reports[0].Timeline.IntervalS, Start: m.reports[0].Timeline.Start, Series: make([]report.Series, len(m.eps))}
	for j, me := range m.eps {
		tl.Series[j] = report.Series{Address: me.id.Address, Target: me.id.Target, Requests: []int64{}, Failed: []int64{}}
	}
	if len(srcs) == 0 {
		return tl, nil
	}
	g, err := m.grid(srcs, len(tl.Series))
	if err != nil {
		return report.Timeline{}, err
	}
	for j := range tl.Series {
		tl.Series[j].Requests, tl.Series[j].Failed = make([]int64, g.n), make([]int64, g.n)
	}
	if vantagesNamed(m.reports) {
		m.vtl = newVantageTimelines(g.n)
		for _, s := range srcs {
			m.vtl.reach(m.reports[s.i], func(k int) int { return g.place(s, k) })
		}
	}
	var shifted []string
	var worst time.Duration
	lat := newLatencyMerge(m, out)
	for _, s := range srcs {
		r := m.reports[s.i]
		if s.start.Sub(g.origin)%s.step != 0 || g.step%s.step != 0 {
			shifted = append(shifted, m.names[s.i])
			worst = max(worst, s.step/2)
		}
		at := func(k int) int { return g.place(s, k) }
		for si, ser := range r.Timeline.Series {
			j := m.index[report.KeyOf(&r.Endpoints[si])]
			out := &tl.Series[j]
			for k := range ser.Requests {
				b := at(k)
				out.Requests[b] += ser.Requests[k]
				out.Failed[b] += ser.Failed[k]
			}
			if l := lat.eps[j]; l != nil && ser.Latency != nil {
				l.AddSaved(ser.Latency, at)
			}
		}
		lat.add(r, at)
		if m.vtl != nil {
			m.vtl.add(r, at, m.index)
		}
	}
	lat.write(&tl, g.n)
	tl.Start, tl.IntervalS = report.Time{Time: g.origin}, g.step.Seconds()
	if len(shifted) > 0 {
		m.notes = append(m.notes, fmt.Sprintf("timeline: the buckets of %s do not fall on the merged grid (%s from %s UTC); each is counted whole in the merged bucket that holds its middle, so their requests may show up to %s early or late (sums are exact)",
			strings.Join(shifted, ", "), g.step, g.origin.UTC().Format("15:04:05.000"), worst))
	}
	return tl, nil
}

// tlSource is the timeline of input i: its start, bucket width and number
// of buckets.
type tlSource struct {
	i     int
	start time.Time
	step  time.Duration
	n     int
}

// timelineSources are the inputs' timelines that have buckets; none is
// the merged report's empty timeline when an input with requests has no
// timeline (and the note that says so).
func (m *merger) timelineSources() (srcs []tlSource, none *report.Timeline) {
	for i, r := range m.reports {
		if len(r.Timeline.Series) == 0 && r.Totals.Requests > 0 {
			m.notes = append(m.notes, "timeline: "+m.names[i]+" has none, so the merged report has none either")
			return nil, &report.Timeline{IntervalS: r.Timeline.IntervalS, Start: r.Timeline.Start, Series: []report.Series{}}
		}
		n := 0
		for _, s := range r.Timeline.Series {
			n = max(n, len(s.Requests))
		}
		if n > 0 {
			srcs = append(srcs, tlSource{i, r.Timeline.Start.Time, report.Interval(r.Timeline.IntervalS), n})
		}
	}
	return srcs, nil
}

// tlGrid is the merged timeline's grid: n buckets of step from origin.
type tlGrid struct {
	origin time.Time
	step   time.Duration
	n      int
}

// place is the merged bucket that holds the middle of bucket k of s.
func (g tlGrid) place(s tlSource, k int) int {
	return int((s.start.Sub(g.origin) + time.Duration(k)*s.step + s.step/2) / g.step)
}

// grid is the merged grid of srcs for series endpoints: from the earliest
// start, a step that is a multiple of every input's when one is at most
// maxMergedInterval (else the widest), doubled until the buckets are at
// most 4 times the inputs' (report.MaxPoints, or HardMaxPoints when an
// input has more). Inputs more than 100 years apart are refused.
func (m *merger) grid(srcs []tlSource, series int) (tlGrid, error) {
	g := tlGrid{origin: srcs[0].start, step: srcs[0].step}
	limit := report.MaxPoints
	lcmOK := true
	for _, s := range srcs {
		if s.start.Before(g.origin) {
			g.origin = s.start
		}
		if l, ok := lcm(g.step, s.step); ok && l <= maxMergedInterval && lcmOK {
			g.step = l
		} else {
			lcmOK = false
		}
		if s.n > report.MaxPoints {
			limit = report.HardMaxPoints
		}
	}
	// The merged timeline holds at most 4 times the buckets of the
	// inputs' series, however far apart their runs: a grid as fine as one
	// input's, over the span of all, is one series per endpoint of the
	// merge, each as long as the longest.
	cells := 0
	for _, r := range m.reports {
		for _, ser := range r.Timeline.Series {
			cells += len(ser.Requests)
		}
	}
	limit = min(limit, max(1, 4*cells/max(series, 1)))
	if !lcmOK {
		g.step = 0
		for _, s := range srcs {
			g.step = max(g.step, s.step)
		}
	}
	// Every input covers at most report.MaxSeconds (report.CheckSaved); together they
	// must too, or bucket positions would overflow.
	for _, s := range srcs {
		if span := s.start.Add(time.Duration(s.n) * s.step).Sub(g.origin); span > report.SecondsDuration(report.MaxSeconds) {
			first := srcs[0]
			for _, o := range srcs {
				if o.start.Equal(g.origin) {
					first = o
				}
			}
			return tlGrid{}, fmt.Errorf("merge %s: its timeline ends %.0f years after that of %s starts: more than 100 years apart",
				m.names[s.i], span.Hours()/24/365.25, m.names[first.i])
		}
	}
	for {
		g.n = 0
		for _, s := range srcs {
			g.n = max(g.n, g.place(s, s.n-1)+1)
		}
		if g.n <= limit {
			return g, nil
		}
		g.step *= 2
	}
}

// groupKey is a group's header and value.
type groupKey struct{ header, value string }

// latencyMerge adds up the inputs' latency series on the merged grid: a
// scope of the merged report (an endpoint, a family, an instance group)
// gets one only when every input that holds requests of it has its series,
// and only as many as a run's report keeps (the first report.MaxLatencyEndpoints
// endpoints of the merge and report.MaxGroupSeries groups of those kept apart, in
// the merged report's order), so the merged series count every request of
// its scope, and a merge holds no more of them than one aggregator.
type latencyMerge struct {
	eps    []*report.LatencyTally // by merged endpoint; nil when it gets none
	fams   map[string]*report.LatencyTally
	famOrd []string
	groups map[groupKey]*mergedGroup
	grpOrd []groupKey
}

// mergedGroup is one instance group over time, on the merged grid.
type mergedGroup struct {
	counts [][2]int64
	lat    report.LatencyTally
}

func newLatencyMerge(m *merger, out *report.Report) *latencyMerge {
	l := &latencyMerge{eps: make([]*report.LatencyTally, len(m.eps)), fams: map[string]*report.LatencyTally{}, groups: map[groupKey]*mergedGroup{}}
	// missing[j] says some input has requests of merged endpoint j but no
	// latency series of it; has[j] that some input has one.
	missing, has := make([]bool, len(m.eps)), make([]bool, len(m.eps))
	famMissing, famHas := map[string]bool{}, map[string]bool{}
	grpMissing, grpHas := map[groupKey]bool{}, map[groupKey]bool{}
	for _, r := range m.reports {
		tl := &r.Timeline
		for si, ser := range tl.Series {
			j := m.index[report.KeyOf(&r.Endpoints[si])]
			switch {
			case ser.Latency != nil:
				has[j] = true
			case r.Endpoints[si].Requests > 0:
				missing[j] = true
			}
		}
		famSeries := map[string]bool{}
		for _, f := range tl.Families {
			famSeries[f.Family] = true
			famHas[f.Family] = true
		}
		for name, f := range r.Families {
			if f != nil && f.Requests > 0 && !famSeries[name] {
				famMissing[name] = true
			}
		}
		grpSeries := map[groupKey]bool{}
		for _, g := range tl.Groups {
			grpSeries[groupKey{g.Header, g.Value}] = true
			grpHas[groupKey{g.Header, g.Value}] = true
		}
		for _, g := range r.Groups {
			if k := (groupKey{g.Header, g.Value}); g.Requests > 0 && !grpSeries[k] {
				grpMissing[k] = true
			}
		}
	}
	kept := 0
	for j := range m.eps {
		if has[j] && !missing[j] && kept < report.MaxLatencyEndpoints {
			l.eps[j] = &report.LatencyTally{}
			kept++
		}
	}
	for _, name := range words.SortedKeys(out.Families) {
		if famHas[name] && !famMissing[name] {
			l.fams[name] = &report.LatencyTally{}
			l.famOrd = append(l.famOrd, name)
		}
	}
	for _, g := range out.Groups {
		k := groupKey{g.Header, g.Value}
		if g.Value != report.OtherValues && grpHas[k] && !grpMissing[k] && len(l.grpOrd) < report.MaxGroupSeries {
			l.groups[k] = &mergedGroup{}
			l.grpOrd = append(l.grpOrd, k)
		}
	}
	return l
}

// add counts r's family and group series in, bucket k of each into
// bucket at(k).
func (l *latencyMerge) add(r *report.Report, at func(k int) int) {
	for i := range r.Timeline.Families {
		f := &r.Timeline.Families[i]
		if t := l.fams[f.Family]; t != nil {
			t.AddSaved(&f.Latency, at)
		}
	}
	for i := range r.Timeline.Groups {
		g := &r.Timeline.Groups[i]
		mg := l.groups[groupKey{g.Header, g.Value}]
		if mg == nil {
			continue
		}
		for k := range g.Requests {
			b := at(k)
			for len(mg.counts) <= b {
				mg.counts = append(mg.counts, [2]int64{})
			}
			mg.counts[b][0] += g.Requests[k]
			mg.counts[b][1] += g.Failed[k]
		}
		mg.lat.AddSaved(&g.Latency, at)
	}
}

// write puts the merged latency series, of n buckets, into tl.
func (l *latencyMerge) write(tl *report.Timeline, n int) {
	for j, t := range l.eps {
		if t != nil {
			lat := t.Latencies(n)
			tl.Series[j].Latency = &lat
		}
	}
	for _, name := range l.famOrd {
		tl.Families = append(tl.Families, report.FamilySeries{Family: name, Latency: l.fams[name].Latencies(n)})
	}
	for _, k := range l.grpOrd {
		mg := l.groups[k]
		g := report.GroupSeries{Header: k.header, Value: k.value, Requests: make([]int64, n), Failed: make([]int64, n), Latency: mg.lat.Latencies(n)}
		for b, c := range mg.counts {
			g.Requests[b], g.Failed[b] = c[0], c[1]
		}
		tl.Groups = append(tl.Groups, g)
	}
}

// lcm is the least common multiple of a and b; false when it overflows.
func lcm(a, b time.Duration) (time.Duration, bool) {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	q := a / x
	if q > math.MaxInt64/b {
		return 0, false
	}
	return q * b, true
}

// fpMergeKey identifies a kind of failure across reports.
type fpMergeKey struct {
	status              int
	class, server, hash string
}

// fingerprints adds up the failure kinds (status or error class, Server, body
// hash); past 64 kinds the smallest join "other kinds", as in the aggregator.
func (m *merger) fingerprints() []report.Fingerprint {
	byKey := map[fpMergeKey]*report.Fingerprint{}
	var order []fpMergeKey
	var other *report.Fingerprint
	for _, r := range m.reports {
		for _, f := range r.Fingerprints {
			if f.Merged {
				if other == nil {
					other = &report.Fingerprint{Merged: true, Addresses: map[string]int64{}}
				}
				addPrint(other, &f)
				continue
			}
			k := fpMergeKey{f.Status, f.Error, f.Server, f.BodyHash}
			g := byKey[k]
			if g == nil {
				g = &report.Fingerprint{Status: f.Status, Error: f.Error, Server: f.Server, BodyHash: f.BodyHash, Addresses: map[string]int64{}}
				byKey[k] = g
				order = append(order, k)
			}
			addPrint(g, &f)
		}
	}
	if len(order) > report.MaxFingerprints {
		ranked := slices.Clone(order)
		sort.SliceStable(ranked, func(i, j int) bool { return byKey[ranked[i]].Count > byKey[ranked[j]].Count })
		if other == nil {
			other = &report.Fingerprint{Merged: true, Addresses: map[string]int64{}}
		}
		for _, k := range ranked[report.MaxFingerprints:] {
			addPrint(other, byKey[k])
			delete(byKey, k)
		}
	}
	out := make([]report.Fingerprint, 0, len(byKey)+1)
	for _, k := range order {
		if g, ok := byKey[k]; ok {
			out = append(out, *g)
		}
	}
	if other != nil {
		out = append(out, *other)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

func addPrint(dst, src *report.Fingerprint) {
	dst.Count += src.Count
	dst.Fresh += src.Fresh
	dst.Reused += src.Reused
	for a, n := range src.Addresses {
		dst.Addresses[a] += n
	}
	if dst.Merged {
		return
	}
	if dst.Body == "" {
		dst.Body = src.Body
	}
	if dst.Producer == "" {
		dst.Producer = src.Producer
	}
}

// client takes the union of the local addresses and ports; ports_count is
// exact when every input listed all its ports (or wrote port_set), else a
// lower bound flagged by ports_count_lower_bound.
func (m *merger) client() (report.Client, error) {
	cl := report.Client{LocalAddresses: []string{}, Ports: []int{}}
	addrs := map[string]bool{}
	ports := map[int]bool{}
	exact := true
	for i, r := range m.reports {
		c := r.Client
		for _, a := range c.LocalAddresses {
			addrs[a] = true
		}
		if c.PortsCount == 0 {
			continue
		}
		if cl.PortsCount == 0 || c.PortMin < cl.PortMin {
			cl.PortMin = c.PortMin
		}
		cl.PortMax = max(cl.PortMax, c.PortMax)
		cl.PortsCount = max(cl.PortsCount, c.PortsCount) // at least, for now
		listed := c.Ports
		if c.PortSet != "" {
			all, err := report.DecodePortSet(c.PortSet)
			if err != nil {
				return report.Client{}, fmt.Errorf("merge %s: client: %w", m.names[i], err)
			}
			listed = all
		}
		for _, p := range listed {
			ports[p] = true
		}
		if c.PortsLowerBound || len(listed) < c.PortsCount {
			exact = false
		}
	}
	for a := range addrs {
		cl.LocalAddresses = append(cl.LocalAddresses, a)
	}
	sort.Slice(cl.LocalAddresses, func(i, j int) bool {
		a, errA := netip.ParseAddr(cl.LocalAddresses[i])
		b, errB := netip.ParseAddr(cl.LocalAddresses[j])
		if errA != nil || errB != nil {
			return cl.LocalAddresses[i] < cl.LocalAddresses[j]
		}
		return a.Less(b)
	})
	for p := range ports {
		cl.Ports = append(cl.Ports, p)
	}
	sort.Ints(cl.Ports)
	if exact {
		cl.PortsCount = len(cl.Ports)
	} else {
		cl.PortsCount = max(cl.PortsCount, len(cl.Ports))
		cl.PortsLowerBound = true
		m.notes = append(m.notes, fmt.Sprintf("client: an input listed only part of its local ports, so ports_count (%d) is a lower bound", cl.PortsCount))
	}
	if len(cl.Ports) > report.MaxPorts {
		cl.PortSet = report.EncodePortSet(cl.Ports)
		cl.Ports = cl.Ports[:report.MaxPorts]
	}
	return cl, nil
}

// mergeConns adds b's connections to a's: the records of both, in the order
// of their first use, the first report.MaxConnRecords kept one by one and the rest
// counted in the overflow; the repeat strata of both (each input's strata
// stand on their own: RepeatTest stratifies); the rest summed. Records keep
// their input's connection IDs, which may repeat across inputs.
func mergeConns(a, b *report.Conns) *report.Conns {
	switch {
	case b == nil:
		return a
	case a == nil:
		c := *b
		c.Records = append([]report.ConnRecord{}, b.Records...)
		c.Repeat = append([]report.RepeatCounts{}, b.Repeat...)
		c.Moments = append([]report.MomentCounts{}, b.Moments...)
		c.Sizes = append([]report.MomentSize{}, b.Sizes...)
		c.Windows = append([]report.Window{}, b.Windows...)
		return &c
	}
	out := &report.Conns{
		Connections: a.Connections + b.Connections,
		Requests:    a.Requests + b.Requests,
		Failed:      a.Failed + b.Failed,
		Overflow: report.ConnOverflow{Connections: a.Overflow.Connections + b.Overflow.Connections,
			Requests: a.Overflow.Requests + b.Overflow.Requests, Failed: a.Overflow.Failed + b.Overflow.Failed},
		Unconnected:  report.ConnStats{Requests: a.Unconnected.Requests + b.Unconnected.Requests, Failed: a.Unconnected.Failed + b.Unconnected.Failed},
		Repeat:       append(append([]report.RepeatCounts{}, a.Repeat...), b.Repeat...),
		Moments:      addStrata(a.Moments, b.Moments, func(m *report.MomentCounts) *int64 { return &m.Strata }),
		Sizes:        addStrata(a.Sizes, b.Sizes, func(m *report.MomentSize) *int64 { return &m.Strata }),
		WindowsCount: a.WindowsCount + b.WindowsCount,
	}
	wins := append(append([]report.Window{}, a.Windows...), b.Windows...)
	slices.SortStableFunc(wins, func(x, y report.Window) int { return x.From.Compare(y.From.Time) })
	out.Windows = wins[:min(len(wins), report.MaxWindows)]
	recs := append(append([]report.ConnRecord{}, a.Records...), b.Records...)
	slices.SortStableFunc(recs, func(x, y report.ConnRecord) int { return x.First.Compare(y.First.Time) })
	if len(recs) > report.MaxConnRecords {
		for _, r := range recs[report.MaxConnRecords:] {
			out.Overflow.Connections++
			out.Overflow.Requests += r.Requests
			out.Overflow.Failed += r.Failed
		}
		recs = recs[:report.MaxConnRecords]
	}
	out.Records = recs
	return out
}

// addStrata adds up two lists of strata (moments, sizes) by shape: a
// stratum of b joins the first of a with the same counts but strata(s).
func addStrata[T comparable](a, b []T, strata func(s *T) *int64) []T {
	shape := func(s T) T { *strata(&s) = 0; return s }
	out := append([]T{}, a...)
	for _, m := range b {
		i := slices.IndexFunc(out, func(o T) bool { return shape(o) == shape(m) })
		if i < 0 {
			out = append(out, m)
			continue
		}
		*strata(&out[i]) += *strata(&m)
	}
	return out
}

// groups merges the inputs' groups by header and value, keeping at most
// maxGroupValues values of a header apart as the aggregator does.
func (m *merger) groups() ([]report.Group, error) {
	var g report.GroupTally
	for _, r := range m.reports {
		for k := range r.Groups {
			g.AddSaved(&r.Groups[k])
		}
	}
	out, err := g.SavedGroups(m.secs)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return out, nil
}
