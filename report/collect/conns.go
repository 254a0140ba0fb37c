package collect

import (
	"pinprobe/report"
	"time"
)

// Bounds of the repeat classes' state.
const (
	// maxFailedConns is how many failed connections are remembered for
	// RepeatCounts, the oldest forgotten first. Connections live for a few
	// requests, so only a few hundred are open at once; a forgotten one
	// only sends its later requests to the after-success class, which
	// costs power, not validity.
	maxFailedConns = 512
	// maxRepeatStrata is how many strata are kept; past it, pairs merge
	// and later strata are twice as long.
	maxRepeatStrata = 256
	// A stratum closes once it holds repeatStratumRequests classified
	// requests and spans repeatStratumSpan: long enough for both classes
	// to be in it, short enough that a change of the failure rate over the
	// run (a deploy, a long outage) is not mistaken for failures repeating
	// on their connection.
	repeatStratumRequests = 32
	repeatStratumSpan     = time.Second
)

// connTable collects one endpoint's results by connection. Its zero value
// is ready; only the collector goroutine writes it.
type ConnTable struct {
	index       map[uint64]int // connection ID -> index in recs
	recs        []report.ConnRecord
	overflow    report.ConnOverflow
	unconnected report.ConnStats

	// failedAt holds the start of the earliest failure seen on each
	// remembered connection; ring orders them for forgetting.
	failedAt map[uint64]time.Time
	ring     []uint64
	ringNext int
	strata   repeatStrata
}

// repeatStrata are the RepeatCounts of consecutive stretches of the run.
type repeatStrata struct {
	list     []report.RepeatCounts
	start    time.Time // first request of the last stratum
	requests int64     // classified requests in the last stratum
	minReqs  int64
	minSpan  time.Duration
}

func (s *repeatStrata) add(at time.Time, afterFailure, failed bool) {
	if s.minReqs == 0 {
		s.minReqs, s.minSpan = repeatStratumRequests, repeatStratumSpan
	}
	if len(s.list) == 0 || (s.requests >= s.minReqs && at.Sub(s.start) >= s.minSpan) {
		if len(s.list) == maxRepeatStrata {
			for i := range len(s.list) / 2 {
				a, b := s.list[2*i], s.list[2*i+1]
				s.list[i] = report.RepeatCounts{AfterFailure: a.AfterFailure + b.AfterFailure, AfterFailureFailed: a.AfterFailureFailed + b.AfterFailureFailed, AfterOK: a.AfterOK + b.AfterOK, AfterOKFailed: a.AfterOKFailed + b.AfterOKFailed}

			}
			s.list = s.list[:len(s.list)/2]
			s.minReqs, s.minSpan = 2*s.minReqs, 2*s.minSpan
		}
		s.list = append(s.list, report.RepeatCounts{})
		s.start, s.requests = at, 0
	}
	c := &s.list[len(s.list)-1]
	s.requests++
	switch {
	case afterFailure && failed:
		c.AfterFailure++
		c.AfterFailureFailed++
	case afterFailure:
		c.AfterFailure++
	case failed:
		c.AfterOK++
		c.AfterOKFailed++
	default:
		c.AfterOK++
	}
}

// add counts one result: connID is the connection the request used (0: it
// got none), localPort its client port, at the request's start, failed the
// aggregator's verdict on it, and reused whether the connection had served
// a request before (httptrace.GotConnInfo.Reused), so a result with reused
// false opened its connection. Results may arrive in any order; a reused
// request whose connection's earlier failure has not arrived yet counts as
// after successes, which costs RepeatTest power, not validity.
func (t *ConnTable) Add(connID uint64, localPort uint16, at time.Time, failed, reused bool) {
	var f int64
	if failed {
		f = 1
	}
	if connID == 0 {
		t.unconnected.Requests++
		t.unconnected.Failed += f
		return
	}
	t.classify(connID, at, failed, reused)
	i, ok := t.index[connID]
	if !ok {
		if len(t.recs) >= report.MaxConnRecords {
			// An unknown connection once the table is full: each one is
			// counted once, by the result that opened it.
			if !reused {
				t.overflow.Connections++
			}
			t.overflow.Requests++
			t.overflow.Failed += f
			return
		}
		if t.index == nil {
			t.index = make(map[uint64]int, report.MaxConnRecords)
		}
		i = len(t.recs)
		t.index[connID] = i
		t.recs = append(t.recs, report.ConnRecord{ID: connID, First: report.Time{Time: at}, Last: report.Time{Time: at}})
	}
	r := &t.recs[i]
	r.Requests++
	r.Failed += f
	if !reused {
		r.Fresh = true
	}
	if r.LocalPort == 0 {
		r.LocalPort = localPort
	}
	if at.Before(r.First.Time) {
		r.First = report.Time{Time: at}
	}
	if at.After(r.Last.Time) {
		r.Last = report.Time{Time: at}
	}
}

// classify counts a reused request in the repeat strata, after a failure
// when its connection failed on a request that started before it, and
// remembers the connection's failure. The class depends only on other
// requests' outcomes, so when every request fails independently it says
// nothing about this one's: both classes then fail alike, whatever made
// connections end early.
func (t *ConnTable) classify(connID uint64, at time.Time, failed, reused bool) {
	if reused {
		f, ok := t.failedAt[connID]
		t.strata.add(at, ok && f.Before(at), failed)
	}
	if !failed {
		return
	}
	if f, ok := t.failedAt[connID]; ok {
		if at.Before(f) {
			t.failedAt[connID] = at
		}
		return
	}
	if t.failedAt == nil {
		t.failedAt = make(map[uint64]time.Time, maxFailedConns)
		t.ring = make([]uint64, 0, maxFailedConns)
	}
	if len(t.ring) < maxFailedConns {
		t.ring = append(t.ring, connID)
	} else {
		delete(t.failedAt, t.ring[t.ringNext])
		t.ring[t.ringNext] = connID
		t.ringNext = (t.ringNext + 1) % maxFailedConns
	}
	t.failedAt[connID] = at
}

// summary returns the table as a Conns, sharing nothing with it.
func (t *ConnTable) Summary() report.Conns {
	c := report.Conns{
		Records:     append([]report.ConnRecord{}, t.recs...),
		Overflow:    t.overflow,
		Unconnected: t.unconnected,
		Repeat:      append([]report.RepeatCounts{}, t.strata.list...),
		Connections: int64(len(t.recs)) + t.overflow.Connections,
		Requests:    t.overflow.Requests + t.unconnected.Requests,
		Failed:      t.overflow.Failed + t.unconnected.Failed,
	}
	for _, r := range t.recs {
		c.Requests += r.Requests
		c.Failed += r.Failed
	}
	return c
}

// seen reports whether the table has counted any request.
func (t *ConnTable) seen() bool {
	return len(t.recs) > 0 || t.overflow.Requests > 0 || t.unconnected.Requests > 0
}
