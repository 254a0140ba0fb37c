package collect

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
)

// The collector classes requests as RepeatTest needs: a reused request is
// after a failure when its connection failed on a request that started
// before it; opening requests and requests without a connection are not
// classed.
func TestConnTableRepeatClasses(t *testing.T) {
	var tab ConnTable
	t0 := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tab.Add(1, 5000, at(0), true, false)  // opens conn 1 with a failure: not classed
	tab.Add(1, 5000, at(10), true, true)  // after a failure, failed
	tab.Add(1, 5000, at(20), false, true) // after a failure, ok
	tab.Add(2, 5001, at(5), false, false)
	tab.Add(2, 5001, at(30), false, true) // after successes, ok
	tab.Add(2, 5001, at(40), true, true)  // after successes, failed
	tab.Add(3, 5002, at(60), false, true) // reported before conn 3's earlier failure
	tab.Add(3, 5002, at(50), true, true)  // after successes (nothing earlier failed), failed
	tab.Add(0, 0, at(70), true, false)    // no connection
	want := []report.RepeatCounts{{AfterFailure: 2, AfterFailureFailed: 1, AfterOK: 4, AfterOKFailed: 2}}
	if got := tab.Summary().Repeat; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("repeat = %+v; want %+v", got, want)
	}
}

// Strata close after a second and 32 requests; past maxRepeatStrata they
// merge in pairs, keeping every count.
func TestConnTableRepeatStrataBounded(t *testing.T) {
	var tab ConnTable
	t0 := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(31, 32))
	var want report.RepeatCounts
	const conns = 20000
	for c := uint64(1); c <= conns; c++ {
		base := t0.Add(time.Duration(c) * 50 * time.Millisecond)
		prevFailed := false
		for j := range 4 {
			failed := rng.IntN(5) == 0
			tab.Add(c, 6000, base.Add(time.Duration(j)*time.Millisecond), failed, j > 0)
			if j > 0 {
				if prevFailed {
					want.AfterFailure++
					if failed {
						want.AfterFailureFailed++
					}
				} else {
					want.AfterOK++
					if failed {
						want.AfterOKFailed++
					}
				}
			}
			prevFailed = prevFailed || failed
		}
	}
	strata := tab.Summary().Repeat
	if len(strata) > maxRepeatStrata || len(strata) < maxRepeatStrata/2 {
		t.Errorf("%d strata; want between %d and %d", len(strata), maxRepeatStrata/2, maxRepeatStrata)
	}
	var got report.RepeatCounts
	for _, s := range strata {
		got.AfterFailure += s.AfterFailure
		got.AfterFailureFailed += s.AfterFailureFailed
		got.AfterOK += s.AfterOK
		got.AfterOKFailed += s.AfterOKFailed
	}
	if got != want {
		t.Errorf("summed strata = %+v; want %+v", got, want)
	}
	if len(tab.failedAt) > maxFailedConns || len(tab.ring) > maxFailedConns {
		t.Errorf("remembers %d failed connections; want at most %d", len(tab.failedAt), maxFailedConns)
	}
}
