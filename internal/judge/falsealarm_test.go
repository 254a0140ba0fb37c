package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/report"
)

// healthyRun simulates one healthy target: four addresses behind which
// every request fails independently with the same probability and takes
// the same latency law, connections kept alive through failures or closed
// by them. It returns, per address, the connection table, the requests
// grouped by the instance that served them, and the latencies of the
// address and of the other three, in the sparse histograms the verdict
// tests (histTest).
func healthyRun(rng *rand.Rand, i int) (conns []report.Conns, failed []int64, groups []report.Group, hists, rests []*report.Hist) {
	const addrs = 4
	cfg := simConfig{requests: 600, rate: 50, perConn: 4, latency: 20 * time.Millisecond, instances: 4,
		fail:      steady([]float64{0.01, 0.05, 0.2}[i%3]),
		closeProb: []float64{0, 0.5, 1}[(i/3)%3]}
	conns = make([]report.Conns, addrs)
	failed = make([]int64, addrs)
	var gt report.GroupTally
	hists, rests = make([]*report.Hist, addrs), make([]*report.Hist, addrs)
	for a := range addrs {
		hists[a], rests[a] = report.NewLatencyHist(), report.NewLatencyHist()
	}
	for a := range addrs {
		rs := simulate(cfg, rng)
		conns[a] = simConns(rs)
		addr := fmt.Sprintf("192.0.2.%d", a+1)
		for _, r := range rs {
			// The instances' names are shared by every address, as a
			// backend pool's are.
			gt.Response(addr, r.start, r.failed)
			gt.Add("X-Served-By", fmt.Sprintf("i%d", r.inst), addr, r.start, report.Outcome{Status: 200, Failed: r.failed})
			if r.failed {
				failed[a]++
			}
			us := report.Micros(time.Duration(float64(20*time.Millisecond) * math.Exp(0.5*rng.NormFloat64())))
			hists[a].Record(us)
			for b := range addrs {
				if b != a {
					rests[b].Record(us)
				}
			}
		}
	}
	return conns, failed, gt.Report(float64(cfg.requests) / cfg.rate), hists, rests
}

// False alarms, counted: healthy runs through every per-address test the
// verdict makes (RepeatTest confirmed by MomentTest, MomentClusterTest
// with the proven windows, each instance against the same addresses at
// the same times, histTest for latency), each at alpha split over the m
// tests. A run with any alarm is a false alarm; their rate must stay at
// most alpha.
func TestFalseAlarmRate(t *testing.T) {
	check.Long(t, "the simulations of many runs")
	t.Parallel() // CPU-bound: let it share the cores with the others
	rng := rand.New(rand.NewPCG(71, 72))
	const (
		runs  = 1000 / check.RateScale
		addrs = 4
		insts = 4
		m     = 3*addrs + insts // tests per run
	)
	alphas := []float64{0.05, 0.001}
	runAlarms := make([]int, len(alphas))
	var repeat, blamed, timed, within, slower, slow [2]int
	for i := range runs {
		conns, failed, groups, hists, rests := healthyRun(rng, i)
		alarm := make([]bool, len(alphas))
		for a := range addrs {
			rp := RepeatTest(conns[a].Repeat).P
			mp := MomentTest(conns[a].Moments).P
			tp := MomentClusterTest(conns[a].Sizes).P
			sl := histTest(hists[a], rests[a], alphas[0]/m) // the larger level; checked per alpha below
			for j, alpha := range alphas {
				level := alpha / m
				blame := rp < level && mp < level
				_, share := provenWindows(&conns[a], failed[a], level)
				windows := share >= windowMajority && tp < level
				if rp < level {
					repeat[j]++
				}
				if blame {
					blamed[j]++
				}
				if windows {
					timed[j]++
				}
				if sl.P < level {
					slower[j]++
				}
				isSlow := sl.P < level && sl.Share >= SlowMinShare
				if isSlow {
					slow[j]++
				}
				alarm[j] = alarm[j] || blame || windows || isSlow
			}
		}
		for _, g := range groups {
			if g.Failed == 0 {
				continue
			}
			if len(g.Times) == 0 {
				t.Fatalf("group %s: %s failed %d times and has no time strata", g.Header, g.Value, g.Failed)
			}
			wp := repeatTest(timeStrata(g.Times)).P
			for j, alpha := range alphas {
				if wp < alpha/m {
					within[j]++
					alarm[j] = true
				}
			}
		}
		for j := range alphas {
			if alarm[j] {
				runAlarms[j]++
			}
		}
	}
	for j, alpha := range alphas {
		rate := float64(runAlarms[j]) / runs
		t.Logf("family α=%v (each of %d tests at %.3g): %d/%d healthy runs with a false alarm (%.4f); "+
			"RepeatTest %d (%d confirmed by MomentTest), time windows %d, instance at the same times on its addresses %d (of %d tests), SlowerTest significant %d (slow %d), over %d tests each",
			alpha, m, alpha/m, runAlarms[j], runs, rate, repeat[j], blamed[j], timed[j], within[j], runs*insts, slower[j], slow[j], runs*addrs)
		if lim := check.BinomialUpper(runs, alpha, 0.001); runAlarms[j] > lim {
			t.Errorf("α=%v: %d of %d healthy runs alarmed; want at most %d", alpha, runAlarms[j], runs, lim)
		}
	}
}
