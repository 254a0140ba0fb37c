package judge

import (
	"pinprobe/report"
	"pinprobe/report/stat"
	"sort"
)

// BurstResult says whether failures came in bursts: whether some stretch
// of the run's connections failed more than connections at other times.
type BurstResult struct {
	Connections int   `json:"connections"`
	Requests    int64 `json:"requests"`
	Failed      int64 `json:"failed"`
	// Groups is how many stretches of consecutive connections (by first
	// use) were compared; Worst is the one failing most (nil below two).
	Groups int         `json:"groups"`
	Worst  *BurstGroup `json:"worst,omitempty"`
	// P is the one-sided p-value of a permutation test that moves whole
	// connections between stretches; Permutations and MinP are as in
	// ClusterResult.
	P            float64 `json:"p"`
	Method       string  `json:"method"` // ClusterNone or ClusterMonteCarlo
	Permutations int     `json:"permutations"`
	MinP         float64 `json:"min_p"`
}

// BurstGroup is one stretch of consecutive connections.
type BurstGroup struct {
	From        report.Time `json:"from"` // first use of its first connection
	To          report.Time `json:"to"`   // last use of its connections
	Connections int         `json:"connections"`
	Requests    int64       `json:"requests"`
	Failed      int64       `json:"failed"`
	FailureRate float64     `json:"failure_rate"`
}

// Significant reports whether failures came in bursts at level alpha.
func (r BurstResult) Significant(alpha float64) bool { return r.P < alpha }

// burstGroupConns is the smallest stretch of connections compared, and
// maxBurstGroups the most stretches. burstPerms is the most permutations:
// BurstTest is a gate at a lenient level (0.05), so p down to 5e-4 is
// plenty.
const (
	burstGroupConns = 8
	maxBurstGroups  = 32
	burstPerms      = 2000
)

// BurstTest tests whether failures concentrate in time at the level of
// connections: the records, in order of first use, are cut into stretches
// of at least 8 connections, and the statistic Σ F²/R over stretches (F
// failures in R requests) is compared with its value when whole
// connections are shuffled between stretches (up to 2000 random
// permutations, fixed seed, stopped early once p is clearly large).
//
// H0 is that connections are alike over time: each connection's requests
// and failures are drawn the same way whenever it was opened. Failures that
// stick to connections (a bad instance) satisfy it, however long their
// connections last, and so do independent failures; an outage of a few
// seconds, or a failure rate that grows over the run, does not. So a
// significant BurstTest says the failure rate changed during the run; it
// is the check to make before RepeatTest's answer may blame connections,
// because a burst makes failures repeat on the connections open during it.
//
// Its level is close to nominal, not exact: connections are only nearly
// exchangeable (slow failures change when the next connections open and
// how long they last). In simulation it was below 0.05 in 4.4% to 6.8% of
// healthy runs, depending on the mechanism, and below 0.01 in 0.8% to
// 1.9%. Use it as a gate, at a lenient level, before blaming connections,
// not as a finding of its own.
//
// With fewer than two stretches' worth of connections, no failure, or no
// success, p is 1.
func BurstTest(recs []report.ConnRecord) BurstResult {
	return burstTest(recs, burstPerms, clusterStopHits, clusterSeed)
}

func burstTest(recs []report.ConnRecord, perms, stopHits int, seed uint64) BurstResult {
	res := BurstResult{P: 1, Method: ClusterNone, MinP: 1}
	rs := make([]report.ConnRecord, 0, len(recs))
	for _, r := range recs {
		if r.Requests > 0 {
			r.Failed = min(max(r.Failed, 0), r.Requests)
			rs = append(rs, r)
			res.Requests += r.Requests
			res.Failed += r.Failed
		}
	}
	res.Connections = len(rs)
	sort.SliceStable(rs, func(i, j int) bool {
		if !rs[i].First.Equal(rs[j].First.Time) {
			return rs[i].First.Before(rs[j].First.Time)
		}
		return rs[i].ID < rs[j].ID
	})
	g := min(len(rs)/burstGroupConns, maxBurstGroups)
	if g < 2 {
		return res
	}
	res.Groups = g
	// Group i holds units [ends[i-1], ends[i]).
	ends := make([]int, g)
	for i := range ends {
		ends[i] = (i + 1) * len(rs) / g
	}
	n := make([]int64, len(rs))
	k := make([]int64, len(rs))
	for i, r := range rs {
		n[i], k[i] = r.Requests, r.Failed
	}
	score := func(order []int32) float64 {
		t, at := 0.0, 0
		for _, e := range ends {
			var rq, f int64
			for _, u := range order[at:e] {
				rq += n[u]
				f += k[u]
			}
			t += float64(f*f) / float64(rq)
			at = e
		}
		return t
	}
	order := make([]int32, len(rs))
	for i := range order {
		order[i] = int32(i)
	}
	obs := score(order)
	// The worst stretch, for the sentence.
	at := 0
	for _, e := range ends {
		grp := BurstGroup{From: rs[at].First, To: rs[at].Last, Connections: e - at}
		for _, r := range rs[at:e] {
			grp.Requests += r.Requests
			grp.Failed += r.Failed
			if r.Last.After(grp.To.Time) {
				grp.To = r.Last
			}
		}
		grp.FailureRate = stat.Round(float64(grp.Failed)/float64(grp.Requests), 6)
		if w := res.Worst; w == nil || grp.Failed*w.Requests > w.Failed*grp.Requests {
			res.Worst = &grp
		}
		at = e
	}
	if res.Failed == 0 || res.Failed == res.Requests {
		return res
	}
	res.Method = ClusterMonteCarlo
	res.MinP = 1 / float64(perms+1)
	thr := obs - 1e-9*(1+obs) // ties count as at least as bursty
	rng := splitmix{seed}
	hits := 0
	for b := 1; b <= perms; b++ {
		for i := len(order) - 1; i > 0; i-- {
			j := rng.below(uint64(i + 1))
			order[i], order[j] = order[j], order[i]
		}
		if score(order) >= thr {
			if hits++; hits >= stopHits {
				res.P, res.Permutations = float64(hits)/float64(b), b
				return res
			}
		}
	}
	res.P, res.Permutations = float64(hits+1)/float64(perms+1), perms
	return res
}
