package collect

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/pinprobe/pinprobe/internal/report"
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

// ConnTable collects one endpoint's results by connection. Its zero value
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
	moments  moments
}

// Bounds of the moment strata.
const (
	// momentMax is the most requests in a stratum of requests sent at the
	// same moment, and momentSpan the longest it may last: an endpoint's
	// requests rotate over probe.Rotation connections, so a stratum
	// usually holds one request of each, a round of the rotation, however
	// low the rate (at 0.2 req/s an endpoint's round lasts 20 s).
	momentMax  = report.MaxMoment
	momentSpan = 30 * time.Second
)

// moments cuts an endpoint's requests, in the order they arrive, into
// strata of requests sent at the same moment: a stratum closes when a
// connection comes round again (or it is full, or a second old). It counts
// each stratum's reused requests by class (after a failure on their
// connection or after successes only), by shape, and finds the windows in
// which every request of every connection failed.
type moments struct {
	conns  [momentMax]uint64 // the open stratum's connections (0: none)
	n      int
	counts report.RepeatCounts
	all    bool // every request of the open stratum failed
	failed int  // the open stratum's failed requests
	first  time.Time
	last   time.Time
	shapes map[report.RepeatCounts]int64
	sizes  map[[2]int64]int64 // {requests, failed} -> strata

	open     bool // a window is open: its strata all failed
	win      report.Window
	winConns map[uint64]bool // the open window's connections: true for one that succeeded before it
	windows  []report.Window
	count    int64

	// okConns are the connections that have succeeded (up to
	// maxOKConns), and pending those of an ended window that had not
	// succeeded before it, by the window's number: the first success after
	// it makes the connection one that crossed the window (see
	// report.Window.Crossing).
	okConns map[uint64]bool
	pending map[uint64]int64
}

// maxOKConns bounds the connections moments remembers a success of.
const maxOKConns = 1 << 16

// add counts one request: classified is set for a reused request, whose
// class afterFailure is.
func (m *moments) add(connID uint64, at time.Time, classified, afterFailure, failed bool) {
	if m.n > 0 && (m.n == momentMax || at.Sub(m.first) > momentSpan || m.has(connID)) {
		m.close()
	}
	if m.n == 0 {
		m.first, m.last, m.all, m.failed = at, at, true, 0
	}
	m.conns[m.n] = connID
	m.n++
	if at.After(m.last) {
		m.last = at
	}
	m.all = m.all && failed
	if failed {
		m.failed++
	} else if connID != 0 {
		if w, ok := m.pending[connID]; ok {
			delete(m.pending, connID)
			if w < int64(len(m.windows)) {
				m.windows[w].Crossing++
			}
		}
		if m.okConns == nil {
			m.okConns = map[uint64]bool{}
		}
		if len(m.okConns) < maxOKConns {
			m.okConns[connID] = true
		}
	}
	if !classified {
		return
	}
	c := &m.counts
	switch {
	case afterFailure:
		c.AfterFailure++
		if failed {
			c.AfterFailureFailed++
		}
	default:
		c.AfterOK++
		if failed {
			c.AfterOKFailed++
		}
	}
}

func (m *moments) has(connID uint64) bool {
	if connID == 0 { // no connection: a dial of its own
		return false
	}
	for _, c := range m.conns[:m.n] {
		if c == connID {
			return true
		}
	}
	return false
}

// close ends the open stratum: its shape is counted when it can weigh in
// the test (both classes, both outcomes), and it opens, extends or ends a
// window.
func (m *moments) close() {
	c := m.counts
	if k := c.AfterFailureFailed + c.AfterOKFailed; c.AfterFailure > 0 && c.AfterOK > 0 && k > 0 && k < c.AfterFailure+c.AfterOK {
		if m.shapes == nil {
			m.shapes = map[report.RepeatCounts]int64{}
		}
		m.shapes[c]++
	}
	if m.sizes == nil {
		m.sizes = map[[2]int64]int64{}
	}
	m.sizes[[2]int64{int64(m.n), int64(m.failed)}]++
	switch {
	case m.all:
		if !m.open {
			m.open, m.win, m.winConns = true, report.Window{From: report.Time{Time: m.first}}, map[uint64]bool{}
		}
		m.win.To = report.Time{Time: m.last}
		m.win.Requests += int64(m.n)
		for _, id := range m.conns[:m.n] {
			if _, ok := m.winConns[id]; !ok && len(m.winConns) < 1024 {
				m.winConns[id] = m.okConns[id]
			}
		}
	case m.open:
		m.endWindow()
	}
	m.n, m.counts = 0, report.RepeatCounts{}
}

// endWindow records the open window when more than one connection was in it.
func (m *moments) endWindow() {
	m.open = false
	m.win.Connections = int64(len(m.winConns))
	if m.win.Connections < 2 {
		return
	}
	m.count++
	if len(m.windows) >= report.MaxWindows {
		return
	}
	if m.pending == nil {
		m.pending = map[uint64]int64{}
	}
	for id, before := range m.winConns {
		switch {
		case before || m.okConns[id]: // before it, or since its last failed stratum
			m.win.Crossing++
		case id != 0:
			m.pending[id] = int64(len(m.windows))
		}
	}
	m.windows = append(m.windows, m.win)
}

// summary returns the shapes and sizes, in a fixed order, and the windows
// as if the run ended now, leaving m as it is.
func (m *moments) summary() ([]report.MomentCounts, []report.MomentSize, []report.Window, int64) {
	cp := *m
	cp.shapes = maps.Clone(m.shapes)
	cp.sizes = maps.Clone(m.sizes)
	cp.windows = slices.Clone(m.windows)
	cp.winConns = maps.Clone(m.winConns)
	cp.pending = maps.Clone(m.pending)
	if cp.n > 0 {
		cp.close()
	}
	if cp.open {
		cp.endWindow()
	}
	out := make([]report.MomentCounts, 0, len(cp.shapes))
	for k, n := range cp.shapes {
		out = append(out, report.MomentCounts{RepeatCounts: k, Strata: n})
	}
	slices.SortFunc(out, func(a, b report.MomentCounts) int { return compareCounts(a.RepeatCounts, b.RepeatCounts) })
	sizes := make([]report.MomentSize, 0, len(cp.sizes))
	for k, n := range cp.sizes {
		sizes = append(sizes, report.MomentSize{Requests: k[0], Failed: k[1], Strata: n})
	}
	slices.SortFunc(sizes, func(a, b report.MomentSize) int {
		return cmp.Or(cmp.Compare(a.Requests, b.Requests), cmp.Compare(a.Failed, b.Failed))
	})
	if cp.windows == nil {
		cp.windows = []report.Window{}
	}
	return out, sizes, cp.windows, cp.count
}

// compareCounts orders RepeatCounts field by field.
func compareCounts(a, b report.RepeatCounts) int {
	return cmp.Or(cmp.Compare(a.AfterFailure, b.AfterFailure), cmp.Compare(a.AfterFailureFailed, b.AfterFailureFailed),
		cmp.Compare(a.AfterOK, b.AfterOK), cmp.Compare(a.AfterOKFailed, b.AfterOKFailed))
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

// Add counts one result: connID is the connection the request used (0: it
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
		t.moments.add(0, at, false, false, failed)
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
			// Grown as connections come, not made for MaxConnRecords
			// (8.5 KB an endpoint, most of which see a few).
			t.index = map[uint64]int{}
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
	f, ok := t.failedAt[connID]
	after := ok && f.Before(at)
	if reused {
		t.strata.add(at, after, failed)
	}
	t.moments.add(connID, at, reused, after, failed)
	if !failed {
		return
	}
	if ok {
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

// Summary returns the table as a Conns, sharing nothing with it.
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
	c.Moments, c.Sizes, c.Windows, c.WindowsCount = t.moments.summary()
	return c
}

// seen reports whether the table has counted any request.
func (t *ConnTable) seen() bool {
	return len(t.recs) > 0 || t.overflow.Requests > 0 || t.unconnected.Requests > 0
}
