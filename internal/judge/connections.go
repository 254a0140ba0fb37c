package judge

import (
	"fmt"
	"math"
	"slices"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// connFinding is an address whose failures stick to some of its
// connections while the connections open at the same moment did not fail:
// one or more instances behind it fail, the others do not.
type connFinding struct {
	moment RepeatResult
	connCount
}

// connCount counts the connections with a failure and all of them, among
// the first report.MaxConnRecords when first is set.
type connCount struct {
	failing, all int64
	first        bool
}

// words says the failing connections: "3 of 12 connections", "64 of the
// first 256 connections".
func (f connCount) words() string {
	if f.first {
		return fmt.Sprintf("%d of the first %d connections", f.failing, f.all)
	}
	return fmt.Sprintf("%d of %d connections", f.failing, f.all)
}

// windowFinding is an address whose failures follow time: they cluster by
// the moment they were sent, in windows in which every connection open
// failed.
type windowFinding struct {
	time    ClusterResult
	windows []report.Window
}

// connections judges each address's connections. Failures repeating on their
// connection (RepeatTest) show a failing instance behind a layer-4 balancer,
// and a failing moment too; so an instance is blamed only when connections
// open at the same moment differ (MomentTest), failures that follow time
// (MomentClusterTest, in windows) are said as such, and else it says it
// cannot tell them apart.
func (j *judgement) connections() {
	r := j.r
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		if !judgesConns(e) {
			continue
		}
		c := e.Conns
		scope := e.Address + " (" + e.Target + ")"
		coarse := RepeatTest(c.Repeat)
		if coarse.Strata > 0 {
			j.test(atEndpoint(repeatAsTest(report.TestConnections, "connections of "+scope, coarse), e))
		}
		moment := RepeatResult{P: 1}
		if len(c.Moments) > 0 {
			moment = MomentTest(c.Moments)
			j.test(atEndpoint(repeatAsTest(report.TestMoments, "connections of "+scope+" at the same moments", moment), e))
		}
		tm := ClusterResult{P: 1}
		_, named := j.endpoint[i]
		proven, share := provenWindows(c, e.Failed, j.level.Each)
		if coarse.P < j.level.Each || named && share >= windowMajority {
			tm = MomentClusterTest(c.Sizes)
			t := report.Test{Kind: report.TestTime, Scope: "failures of " + scope + " by the moment they were sent", Requests: tm.Requests, Failed: tm.Failed, P: tm.P}
			t.FailureRate, t.CI95 = RateCI95(tm.Failed, tm.Requests)
			j.test(atEndpoint(t, e))
		}
		windows := share >= windowMajority && tm.P < j.level.Each
		switch {
		case coarse.P < j.level.Each && moment.P < j.level.Each:
			f := &connFinding{moment: moment}
			f.failing, f.all = c.Failing()
			f.first = c.Overflow.Connections > 0
			j.connFind[i] = f
		case windows:
			j.windowFind[i] = &windowFinding{time: tm, windows: proven}
			if !named {
				j.notes = append(j.notes, words.Capitalize(j.label(i)+" "+j.windowWords(j.windowFind[i])+"."))
			}
		case coarse.P < j.level.Each:
			j.notes = append(j.notes, j.cannotTell(i, coarse, moment))
		}
	}
}

// windowMajority is the share of an address's failures that must have come
// in windows, where every connection open failed, for the verdict to say
// its failures followed time.
const windowMajority = 0.5

// provenWindows are the windows of connections c (of an endpoint with failed
// failures) that time explains and a failing instance does not: every
// connection open failed, and one of them also succeeded outside the window
// (Crossing), or there were too many to all be a failing instance's (s^m <
// each, m connections, s the share of c that failed). share is their share of
// the failed requests.
func provenWindows(c *report.Conns, failed int64, each float64) (proven []report.Window, share float64) {
	if c == nil || failed == 0 {
		return nil, 0
	}
	failing, all := c.Failing()
	s := 1.0
	if all > 0 {
		s = float64(failing) / float64(all)
	}
	var n int64
	for _, w := range c.Windows {
		if w.Crossing > 0 || math.Pow(s, float64(w.Connections)) < each {
			proven = append(proven, w)
			n += w.Requests
		}
	}
	return proven, float64(n) / float64(failed)
}

// cannotTell says that failures repeat on an address's connections but
// that the run cannot tell a failing instance from a failing moment.
func (j *judgement) cannotTell(i int, coarse, moment RepeatResult) string {
	why := "connections open at the same moment did not fail differently"
	if moment.Strata == 0 {
		why = "no two connections were open at the same moment with one failing and the other not, so there was nothing to compare"
	} else {
		why += fmt.Sprintf(" (%d moments could tell, %s)", moment.Strata, words.PValue(moment.P))
	}
	fix := "A longer run, or a higher --rate, can tell."
	if c := j.r.Plan.Concurrency; c > 0 && c < 4 {
		fix = "With -c of 4 or more the requests rotate over 4 connections open at once, which can tell."
	}
	return fmt.Sprintf("Failures repeat on the connections of %s (after a failure on the same connection %d of %d requests failed, after successes only %d of %d, %s), but %s: an instance behind it and a moment (an outage, a flapping backend) cannot be told apart. %s",
		j.label(i), coarse.AfterFailureFailed, coarse.AfterFailure, coarse.AfterOKFailed, coarse.AfterOK, words.PValue(coarse.P), why, fix)
}

// windowWords says when an address failed: "failed in 3 windows of about
// 1 s, on every connection open then (its failures vary over time,
// p<1e-9)".
func (j *judgement) windowWords(w *windowFinding) string {
	d := make([]float64, len(w.windows))
	for k, win := range w.windows {
		d[k] = win.To.Sub(win.From.Time).Seconds()
	}
	slices.Sort(d)
	about := ""
	if len(d) > 0 {
		about = " of about " + secondsWords(d[len(d)/2]+j.requestGap())
	}
	also := ""
	if slices.ContainsFunc(w.windows, func(win report.Window) bool { return win.Crossing > 0 }) {
		also = ", some of which succeeded before or after"
	}
	return fmt.Sprintf("failed in %d window%s%s, on every connection open then%s (its failures vary over time, %s)",
		len(w.windows), words.Plural(len(w.windows)), about, also, words.PValue(w.time.P))
}

// requestGap is the time between two requests of an endpoint, by plan: a
// window's span from its first failed request to its last is that much
// short of how long it lasted.
func (j *judgement) requestGap() float64 {
	p := j.r.Plan
	if p.Max || p.Rate <= 0 || len(j.r.Endpoints) == 0 {
		return 0
	}
	return float64(len(j.r.Endpoints)) / p.Rate
}

// secondsWords rounds a duration for a sentence: "1 s", "2.5 s", "300 ms".
func secondsWords(s float64) string {
	switch {
	case s >= 10:
		return fmt.Sprintf("%.0f s", math.Round(s))
	case s >= 1:
		return fmt.Sprintf("%.2g s", s)
	default:
		return fmt.Sprintf("%.0f ms", math.Max(1, math.Round(s*1000/10)*10))
	}
}

// momentGroups is the most strata MomentClusterTest weighs; past it, every
// size counts in proportion. momentSize is the largest stratum it takes:
// the collector cuts them at 16 requests.
const (
	momentGroups = 5000
	momentSize   = 64
)

// MomentClusterTest is ClusterTest over an address's strata of requests sent at
// one moment (report.Conns.Sizes), cut by time and the rotation over
// connections, not by outcomes, so the test holds. A failing moment (an outage,
// a flapping backend) fails whole strata; a failing sticky instance does not,
// each stratum holding a request of every open connection. Past momentGroups
// strata the sizes are scaled down, which costs power, not validity.
func MomentClusterTest(sizes []report.MomentSize) ClusterResult {
	var total int64
	for _, s := range sizes {
		if s.Requests > 0 && s.Requests <= momentSize {
			total += max(s.Strata, 0)
		}
	}
	scale := 1.0
	if total > momentGroups {
		scale = float64(momentGroups) / float64(total)
	}
	var cs []ConnCounts
	for _, s := range sizes {
		if s.Requests <= 0 || s.Requests > momentSize {
			continue
		}
		n := int64(math.Round(float64(max(s.Strata, 0)) * scale))
		for range n {
			cs = append(cs, ConnCounts{ID: uint64(len(cs) + 1), Requests: s.Requests, Failed: s.Failed})
		}
	}
	return ClusterTest(cs)
}
