package judge

import (
	"fmt"
	"math"
	"sort"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"pinprobe/probe"
	"pinprobe/report"
	"pinprobe/report/phrase"
	"pinprobe/report/stat"
)

// findings are the tests the verdict makes inside addresses: instances by
// response header, failures that stick to connections, latency. They are
// planned first, so the Bonferroni split counts them.
type findings struct {
	r *report.Report
	// groupHeaders holds the indexes of r.Groups by header, for headers
	// with at least two values that carry requests.
	groupHeaders map[string][]int
	headers      []string
	// repeat holds the endpoints whose connections can be judged: with
	// failures and requests reused after them.
	repeat []int
	// slowEps holds, by target, the endpoints compared for latency;
	// slowGroups the groups, by header.
	slowEps map[string][]int
	targets []string
}

func newFindings(r *report.Report) *findings {
	f := &findings{r: r, groupHeaders: map[string][]int{}, slowEps: map[string][]int{}}
	for i, g := range r.Groups {
		if g.Requests == 0 {
			continue
		}
		if _, ok := f.groupHeaders[g.Header]; !ok {
			f.headers = append(f.headers, g.Header)
		}
		f.groupHeaders[g.Header] = append(f.groupHeaders[g.Header], i)
	}
	for _, h := range f.headers {
		if len(f.groupHeaders[h]) < 2 {
			delete(f.groupHeaders, h)
		}
	}
	for i, e := range r.Endpoints {
		if e.Conns != nil && e.Failed > 0 && afterFailure(e.Conns) > 0 {
			f.repeat = append(f.repeat, i)
		}
		if e.Requests > 0 && e.HDR != "" {
			if _, ok := f.slowEps[e.Target]; !ok {
				f.targets = append(f.targets, e.Target)
			}
			f.slowEps[e.Target] = append(f.slowEps[e.Target], i)
		}
	}
	return f
}

// afterFailure counts the requests reused after a failure on their connection.
func afterFailure(c *report.Conns) int64 {
	var n int64
	for _, s := range c.Repeat {
		n += s.AfterFailure
	}
	return n
}

// failureTests is how many failure tests the findings make: one per group
// of a header with two values or more, one per endpoint's connections.
func (f *findings) failureTests() int {
	n := len(f.repeat)
	for _, idx := range f.groupHeaders {
		n += len(idx)
	}
	return n
}

// slowTests is how many latency tests the findings make.
func (f *findings) slowTests() int {
	n := 0
	for _, idx := range f.slowEps {
		if len(idx) > 1 {
			n += len(idx)
		}
	}
	for _, idx := range f.groupHeaders {
		n += len(idx)
	}
	return n
}

// groups tests every group against the other groups of its header.
func (f *findings) groups(v *report.Verdict, alpha float64) {
	for _, h := range f.headers {
		idx, ok := f.groupHeaders[h]
		if !ok {
			continue
		}
		var failed, n int64
		for _, i := range idx {
			failed += f.r.Groups[i].Failed
			n += f.r.Groups[i].Requests
		}
		for _, i := range idx {
			g := &f.r.Groups[i]
			t := newTest("group "+g.Header+": "+g.Value, g.Failed, g.Requests, failed-g.Failed, n-g.Requests, alpha)
			v.Tests = append(v.Tests, t)
			if t.Significant && g.Value != report.OtherValues {
				lo, hi := stat.Wilson(g.Failed, g.Requests)
				v.Suspects = append(v.Suspects, report.Suspect{
					Kind: report.SuspectGroup, Group: g.Header + ": " + g.Value,
					Requests: g.Requests, Failed: g.Failed, FailureRate: g.FailureRate,
					CI95: [2]float64{stat.Round(lo, 4), stat.Round(hi, 4)}, P: t.P,
				})
			}
		}
	}
}

// connections judges, for every endpoint with failures, whether its
// failures stick to connections: a request on a connection that failed
// before fails more often than one on a connection with only successes
// (RepeatTest). A run whose failures came in a burst (BurstTest) shows the
// same, so then the connections are not blamed and the burst is said.
func (f *findings) connections(v *report.Verdict, alpha float64, instances []report.Suspect) {
	for _, i := range f.repeat {
		e := &f.r.Endpoints[i]
		var strata []report.RepeatCounts
		strata = append(strata, e.Conns.Repeat...)
		rr := RepeatTest(strata)
		t := report.Test{
			Scope:    "connections of " + e.Address + " (" + e.Target + ")",
			Requests: rr.AfterFailure, Failed: rr.AfterFailureFailed, FailureRate: stat.Round(rr.AfterFailureRate, 6),
			CI95: rr.AfterFailureCI95, RestFailed: rr.AfterOKFailed, RestTotal: rr.AfterOK,
			P: rr.P, Significant: rr.Significant(alpha),
		}
		v.Tests = append(v.Tests, t)
		if !t.Significant {
			continue
		}
		// A failing instance already explains failures that stick to
		// connections; only without one could a burst be the cause.
		if b := BurstTest(e.Conns.Records); !f.inFailingInstance(instances, e.Address) && b.P < burstAlpha && b.Worst != nil {
			w := b.Worst
			v.Notes = append(v.Notes, fmt.Sprintf("Failures on %s came in a burst rather than on some connections: from %s to %s %d of %d requests failed (%s), against %s of the run's other connections (burst test %s).",
				e.Address, phrase.Clock(w.From.Time), phrase.Clock(w.To.Time), w.Failed, w.Requests, phrase.PctRate(w.FailureRate),
				phrase.PctRate(float64(b.Failed-w.Failed)/math.Max(1, float64(b.Requests-w.Requests))), phrase.PValue(b.P)))
			continue
		}
		failing, conns := failingConns(e.Conns)
		lo, hi := stat.Wilson(e.Failed, e.Requests)
		v.Suspects = append(v.Suspects, report.Suspect{
			Kind: report.SuspectConnections, Address: e.Address, Family: e.Family, Target: e.Target,
			Requests: e.Requests, Failed: e.Failed, FailureRate: e.FailureRate,
			CI95: [2]float64{stat.Round(lo, 4), stat.Round(hi, 4)}, P: rr.P, Connections: conns, FailingConnections: failing,
		})
	}
}

// inFailingInstance reports whether a failing instance (a group suspect)
// answered failures for addr.
func (f *findings) inFailingInstance(instances []report.Suspect, addr string) bool {
	for _, s := range instances {
		if s.Kind == report.SuspectGroup && f.failedBy(&s)[addr] > 0 {
			return true
		}
	}
	return false
}

// explained returns the endpoints whose failures came, nine in ten or
// more, from failing instances (group suspects), with a sentence for each:
// such an endpoint failed more than the others only because more of its
// requests landed on those instances (a balancer's round robin can do
// that), so the instance is the culprit, not the address.
func (f *findings) explained(instances []report.Suspect) map[int]string {
	out := map[int]string{}
	if len(instances) == 0 {
		return out
	}
	for i, e := range f.r.Endpoints {
		if e.Failed == 0 {
			continue
		}
		var from int64
		var names []string
		for _, s := range instances {
			if n := f.failedBy(&s)[e.Address]; n > 0 {
				from += n
				names = append(names, s.Group)
			}
		}
		if from*10 >= e.Failed*9 {
			out[i] = fmt.Sprintf("%s failed more than some addresses only because more of its requests were answered by %s (%d of its %d failures came from there): the instance is the cause, not the address.",
				e.Address, phrase.JoinAnd(names), min(from, e.Failed), e.Failed)
		}
	}
	return out
}

// failedBy is a group suspect's failures by address, nil when none.
func (f *findings) failedBy(s *report.Suspect) map[string]int64 {
	if g := f.r.FindGroup(s.Group); g != nil {
		return g.FailedBy
	}
	return nil
}

// burstAlpha is the level of the burst gate: lenient, since it only stops
// connections from being blamed.
const burstAlpha = 0.05

// failingConns counts the connections with a failure, and all of them.
func failingConns(c *report.Conns) (failing, all int64) {
	for _, r := range c.Records {
		if r.Failed > 0 {
			failing++
		}
	}
	if c.Overflow.Failed > 0 {
		failing += c.Overflow.Connections // not kept apart: an upper bound
	}
	return failing, c.Connections
}

// connectionWords says a connection suspect in a sentence: "failures
// stick to connections of 127.0.0.2: 3 of 12 connections failed; after a
// failure on the same connection 9 of 9 requests failed (100%), after
// successes only 0 of 27 (0%), p=2.1e-7: one or more instances behind this
// address fail, the others do not".
func connectionWords(r *report.Report, s *report.Suspect) string {
	e := r.FindEndpoint(s.Target, s.Address)
	if e == nil || e.Conns == nil {
		return ""
	}
	rr := RepeatTest(e.Conns.Repeat)
	label := s.Address
	if len(report.TargetsOf(r)) > 1 {
		label += " (" + report.ShortURL(r, s.Target) + ")"
	}
	return fmt.Sprintf("failures stick to connections of %s: %d of %d connections failed; after a failure on the same connection %d of %d requests failed (%s), after successes only %d of %d (%s), %s: one or more instances behind this address fail, the others do not",
		label, s.FailingConnections, s.Connections, rr.AfterFailureFailed, rr.AfterFailure, phrase.PctRate(rr.AfterFailureRate),
		rr.AfterOKFailed, rr.AfterOK, phrase.PctRate(rr.AfterOKRate), phrase.PValue(rr.P))
}

// groupWords says a group suspect in a sentence: "X-Served-By: gw-3
// answers 502: 16 of 16 of its responses failed (100%, 95% CI 81–100%)
// against 0 of 48 from the other values of X-Served-By (0%, 0–7.4%),
// p<1e-9".
func groupWords(r *report.Report, s *report.Suspect) string {
	var g *report.Group
	for i := range r.Groups {
		if r.Groups[i].Header+": "+r.Groups[i].Value == s.Group {
			g = &r.Groups[i]
		}
	}
	if g == nil {
		return s.Group
	}
	var restF, restN int64
	for _, o := range r.Groups {
		if o.Header == g.Header && o.Value != g.Value {
			restF, restN = restF+o.Failed, restN+o.Requests
		}
	}
	how := FailureKinds(&g.Stats, report.FailStatusOf(r))
	if how != "" {
		how = ", which " + how
	}
	lo, hi := stat.Wilson(g.Failed, g.Requests)
	rlo, rhi := stat.Wilson(restF, restN)
	restRate := 0.0
	if restN > 0 {
		restRate = float64(restF) / float64(restN)
	}
	return fmt.Sprintf("%s%s: %d of %d of its responses failed (%s, 95%% CI %s) against %d of %d from the other values of %s (%s, %s), %s",
		s.Group, how, g.Failed, g.Requests, phrase.PctRate(g.FailureRate), phrase.CIRange(lo, hi), restF, restN, g.Header,
		phrase.PctRate(restRate), phrase.CIRange(rlo, rhi), phrase.PValue(s.P))
}

// slow names the endpoints (within their URL) and the groups (within their
// header) whose latency is higher than the rest's, significantly and by
// enough to matter.
func (f *findings) slow(v *report.Verdict, alpha float64) {
	check := func(scope, who, against string, h, restH *hdr.Histogram) {
		if h == nil || restH == nil {
			return
		}
		res := SlowerTest(h, restH, alpha)
		if !res.Slow {
			return
		}
		v.Slow = append(v.Slow, report.SlowFinding{Scope: scope, SlowResult: res})
		how := fmt.Sprintf("median %s against %s (%.1f×)", phrase.Latency(res.MedianMS, 1), phrase.Latency(res.RestMedianMS, 1), res.Ratio)
		if res.Ratio < SlowRatio {
			how = fmt.Sprintf("its slowest %s of requests took at least %.1f× as long as the rest's (p99 %s against %s)",
				phrase.PctRate(res.Share), SlowRatio, phrase.Latency(res.P99MS, 1), phrase.Latency(res.RestP99MS, 1))
		}
		v.Notes = append(v.Notes, fmt.Sprintf("%s is slow against %s: %s, %s.", who, against, how, phrase.PValue(res.P)))
	}
	for _, tg := range f.targets {
		idx := f.slowEps[tg]
		if len(idx) < 2 {
			continue
		}
		encs := make([]string, len(idx))
		for k, i := range idx {
			encs[k] = f.r.Endpoints[i].HDR
		}
		lo := newLeaveOneOut(encs)
		for k, i := range idx {
			e := &f.r.Endpoints[i]
			words := e.Address
			if len(f.targets) > 1 {
				words += " (" + report.ShortURL(f.r, e.Target) + ")"
			}
			check("endpoint "+e.Address+" ("+e.Target+")", words, "the other addresses of its URL", lo.own[k], lo.rest(k))
		}
	}
	for _, h := range f.headers {
		idx, ok := f.groupHeaders[h]
		if !ok {
			continue
		}
		encs := make([]string, len(idx))
		for k, i := range idx {
			encs[k] = f.r.Groups[i].HDR
		}
		lo := newLeaveOneOut(encs)
		for k, i := range idx {
			g := &f.r.Groups[i]
			check("group "+g.Header+": "+g.Value, g.Header+": "+g.Value, "the other values of "+g.Header, lo.own[k], lo.rest(k))
		}
	}
}

// leaveOneOut gives, for each of several encoded histograms, the merge of
// all the others, without merging n-1 histograms n times: each is decoded
// once, all are merged once, and the rest of one is the whole less its own
// counts (bucket by bucket, the layouts being the same). 200 addresses of
// one URL took seconds of CPU the other way.
type leaveOneOut struct {
	own   []*hdr.Histogram // decoded; nil where the encoding is bad
	whole *hdr.Snapshot
}

func newLeaveOneOut(encs []string) *leaveOneOut {
	lo := &leaveOneOut{own: make([]*hdr.Histogram, len(encs))}
	all := report.NewHist()
	for k, enc := range encs {
		if h, err := report.DecodeHDR(enc); err == nil {
			lo.own[k] = h
			all.Merge(h)
		}
	}
	lo.whole = all.Export()
	return lo
}

// rest is the merge of every histogram but the k-th.
func (lo *leaveOneOut) rest(k int) *hdr.Histogram {
	own := lo.own[k]
	if own == nil {
		return nil
	}
	o := own.Export()
	w := lo.whole
	if o.LowestTrackableValue != w.LowestTrackableValue || o.HighestTrackableValue != w.HighestTrackableValue ||
		o.SignificantFigures != w.SignificantFigures || len(o.Counts) != len(w.Counts) {
		// Another layout (a report written with other bounds): its counts
		// were re-recorded into the whole, so merge the others instead.
		rest := report.NewHist()
		for j, h := range lo.own {
			if j != k && h != nil {
				rest.Merge(h)
			}
		}
		return rest
	}
	counts := make([]int64, len(w.Counts))
	for i := range counts {
		counts[i] = w.Counts[i] - o.Counts[i]
	}
	return hdr.Import(&hdr.Snapshot{LowestTrackableValue: w.LowestTrackableValue, HighestTrackableValue: w.HighestTrackableValue,
		SignificantFigures: w.SignificantFigures, Counts: counts})
}

// explainAfterFailure says when a kind of failure without a response came
// only on connections right after a failed response: a gateway that closes
// the connection after its own error page without saying so. Browsers and
// curl resend such a request silently; pinprobe counts it, and says so.
func explainAfterFailure(r *report.Report) []string {
	var notes []string
	fail := report.FailStatusOf(r)
	for _, e := range r.Endpoints {
		for _, class := range phrase.SortedKeys(e.AfterFailure) {
			n := e.AfterFailure[class]
			if n < 3 || e.Errors[class] != n {
				continue
			}
			var statuses []string
			for _, k := range phrase.ByCount(e.Status) {
				var code int
				if _, err := fmt.Sscan(k, &code); err == nil && fail.Fails(code) {
					statuses = append(statuses, k)
				}
			}
			after := "a failed response"
			if len(statuses) > 0 {
				after = "a failed response (" + strings.Join(statuses[:min(2, len(statuses))], " or ") + ")"
			}
			notes = append(notes, fmt.Sprintf("All %d %s failures on %s came on a connection right after %s: the gateway closes the connection after its own error page without saying so (no Connection: close). Browsers and curl resend such a request silently; pinprobe counts it. --new-conn shows the gateway's answers alone.",
				n, class, e.Address, after))
		}
	}
	return notes
}

// clientNote says that some requests could not be sent for the client's
// own reasons, which are nobody else's fault.
func clientNote(r *report.Report) []string {
	n := r.Totals.ClientErrors
	if n == 0 {
		return nil
	}
	cause := ""
	if r.ClientError != "" {
		cause = " (" + r.ClientError + ")"
	}
	return []string{fmt.Sprintf("%d request%s could not be sent by this machine%s: out of file descriptors or ephemeral ports. They count against no backend. Raise the descriptor limit (ulimit -n), lower -c, or keep connections longer (--conn-requests).",
		n, phrase.Plural(int(n)), cause)}
}

// droppedNote says plainly what dropped requests mean: the endpoint had
// as many requests in flight as allowed, so the schedule skipped them.
func droppedNote(r *report.Report) []string {
	d := r.Totals.Dropped
	if d == 0 {
		return nil
	}
	var where []string
	for _, e := range r.Endpoints {
		if e.Dropped > 0 {
			where = append(where, fmt.Sprintf("%s ×%d", e.Address, e.Dropped))
		}
	}
	where = phrase.CapItems(where, 6)
	why := fmt.Sprintf("An endpoint gets more workers for a slow backend up to -c (%d): a backend that slow needs a higher -c.", r.Plan.Concurrency)
	if r.Plan.Concurrency > probe.BusyWorkers {
		why = fmt.Sprintf("An endpoint gets more workers for a slow backend up to -c (%d), and past %d only while this machine has CPU to spare: a backend that slow needs a higher -c, or a less busy client.",
			r.Plan.Concurrency, probe.BusyWorkers)
	}
	return []string{fmt.Sprintf("%d request%s fell due but %s not sent, because every worker of the endpoint was busy: %s. They are in no count. %s",
		d, phrase.Plural(int(d)), map[bool]string{true: "was", false: "were"}[d == 1], strings.Join(where, ", "), why)}
}

// ClientNote is the sentence that names the client-side errors of a run
// and the fix; "" when there were none.
func ClientNote(r *report.Report) string {
	if n := clientNote(r); len(n) > 0 {
		return n[0]
	}
	return ""
}

// unjudged names the endpoints no request reached: the verdict says
// nothing of them.
func unjudged(r *report.Report) []string {
	var none []string
	for _, e := range r.Endpoints {
		if e.Requests == 0 && e.RemovedAt == nil {
			label := e.Address
			if len(report.TargetsOf(r)) > 1 {
				label += " (" + report.ShortURL(r, e.Target) + ")"
			}
			none = append(none, label)
		}
	}
	if len(none) == 0 {
		return nil
	}
	sort.Strings(none)
	shown := phrase.CapItems(none, 8)
	return []string{fmt.Sprintf("%d endpoint%s got no request and %s not judged: %s. Raise -r or -d so every address gets requests.",
		len(none), phrase.Plural(len(none)), map[bool]string{true: "is", false: "are"}[len(none) == 1], phrase.JoinAnd(shown))}
}
