package collect

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/report"
)

// connRef is the unbounded reference: every connection kept exactly.
type connRef struct {
	requests, failed int64
	first, last      time.Time
	port             uint16
	fresh            bool
	order            int // position of its first result
}

// A million results over a hundred thousand connections keep at most
// MaxConnRecords records, and every count is exact: the records match an
// unbounded reference one by one, the overflow holds the rest, and the
// totals add up.
func TestConnTableBoundedAndExact(t *testing.T) {
	const results, conns = 1_000_000, 100_000
	rng := rand.New(rand.NewPCG(11, 12))
	base := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	var tab ConnTable
	ref := map[uint64]*connRef{}
	var order []uint64
	next := uint64(1)
	open := []uint64{} // connections that may get more requests
	var unconnected, unconnFailed int64
	for i := range results {
		at := base.Add(time.Duration(i) * time.Millisecond)
		failed := rng.IntN(10) == 0
		var id uint64
		reused := false
		switch {
		case rng.IntN(200) == 0:
			id = 0 // the dial failed: no connection
		case len(open) == 0 || (next <= conns && rng.IntN(10) == 0):
			id, next = next, next+1
			open = append(open, id)
		default:
			j := rng.IntN(len(open))
			id, reused = open[j], true
			if rng.IntN(12) == 0 { // closed after this request
				open[j] = open[len(open)-1]
				open = open[:len(open)-1]
			}
		}
		// Results of one connection may arrive out of order: now and then
		// a reused result is stamped a little earlier than the last one.
		if reused && rng.IntN(50) == 0 {
			at = at.Add(-5 * time.Millisecond)
		}
		port := uint16(10000 + id%50000)
		tab.Add(id, port, at, failed, reused)
		if id == 0 {
			unconnected++
			if failed {
				unconnFailed++
			}
			continue
		}
		r := ref[id]
		if r == nil {
			r = &connRef{first: at, last: at, port: port, order: len(order)}
			ref[id] = r
			order = append(order, id)
		}
		r.requests++
		if failed {
			r.failed++
		}
		r.fresh = r.fresh || !reused
		if at.Before(r.first) {
			r.first = at
		}
		if at.After(r.last) {
			r.last = at
		}
	}
	if got := len(tab.index); got > report.MaxConnRecords {
		t.Errorf("index holds %d connections; want at most %d", got, report.MaxConnRecords)
	}
	c := tab.Summary()
	if got := len(c.Records); got != report.MaxConnRecords {
		t.Fatalf("records = %d; want %d", got, report.MaxConnRecords)
	}
	for i, rec := range c.Records {
		id := order[i]
		r := ref[id]
		want := report.ConnRecord{ID: id, LocalPort: r.port, First: report.Time{Time: r.first}, Last: report.Time{Time: r.last}, Requests: r.requests, Failed: r.failed, Fresh: r.fresh}
		if rec != want {
			t.Fatalf("record %d = %+v; want %+v", i, rec, want)
		}
	}
	var ov report.ConnOverflow
	var total, failed int64
	for i, id := range order {
		r := ref[id]
		total += r.requests
		failed += r.failed
		if i >= report.MaxConnRecords {
			ov.Connections++
			ov.Requests += r.requests
			ov.Failed += r.failed
		}
	}
	if c.Overflow != ov {
		t.Errorf("overflow = %+v; want %+v", c.Overflow, ov)
	}
	if want := (report.ConnStats{Requests: unconnected, Failed: unconnFailed}); c.Unconnected != want {
		t.Errorf("unconnected = %+v; want %+v", c.Unconnected, want)
	}
	if c.Connections != int64(len(order)) || c.Requests != results || c.Failed != failed+unconnFailed {
		t.Errorf("totals = %d connections, %d requests, %d failed; want %d, %d, %d",
			c.Connections, c.Requests, c.Failed, len(order), results, failed+unconnFailed)
	}
	if len(order) < conns/2 {
		t.Errorf("the test made only %d connections; want about %d", len(order), conns)
	}
	if ov.Connections != int64(len(order)-report.MaxConnRecords) {
		t.Errorf("overflow connections = %d; want %d", ov.Connections, len(order)-report.MaxConnRecords)
	}
}

// Once the table is full, a result costs no allocation: memory stays flat.
func TestConnTableFlatWhenFull(t *testing.T) {
	var tab ConnTable
	at := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	for id := uint64(1); id <= report.MaxConnRecords; id++ {
		tab.Add(id, 40000, at, false, false)
	}
	id := uint64(report.MaxConnRecords)
	allocs := testing.AllocsPerRun(10000, func() {
		id++
		tab.Add(id, 40000, at, id%3 == 0, false)
		tab.Add(id, 40000, at, false, true)
		tab.Add(1, 40000, at, false, true)
	})
	if allocs != 0 {
		t.Errorf("add allocates %v times per call once full; want 0", allocs)
	}
}

// A connection whose reused results arrive before the one that opened it
// is still one connection, fresh, counted once, also in the overflow.
func TestConnTableOutOfOrder(t *testing.T) {
	var tab ConnTable
	t0 := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	tab.Add(7, 5000, t0.Add(2*time.Second), true, true)
	tab.Add(7, 5000, t0, false, false)
	tab.Add(7, 5000, t0.Add(time.Second), false, true)
	tab.Add(0, 0, t0, true, false)
	c := tab.Summary()
	want := report.ConnRecord{ID: 7, LocalPort: 5000, First: report.Time{Time: t0}, Last: report.Time{Time: t0.Add(2 * time.Second)}, Requests: 3, Failed: 1, Fresh: true}
	if len(c.Records) != 1 || c.Records[0] != want {
		t.Errorf("records = %+v; want [%+v]", c.Records, want)
	}
	if c.Connections != 1 || c.Requests != 4 || c.Failed != 2 || c.Unconnected != (report.ConnStats{Requests: 1, Failed: 1}) {
		t.Errorf("summary = %+v; want 1 connection, 4 requests, 2 failed, 1 unconnected failure", c)
	}
	for id := uint64(100); tab.Summary().Connections < report.MaxConnRecords; id++ {
		tab.Add(id, 5000, t0, false, false)
	}
	tab.Add(9999, 5000, t0, true, true) // reused result first, in the overflow
	tab.Add(9999, 5000, t0, false, false)
	tab.Add(9999, 5000, t0, false, true)
	if got, want := tab.Summary().Overflow, (report.ConnOverflow{Connections: 1, Requests: 3, Failed: 1}); got != want {
		t.Errorf("overflow = %+v; want %+v", got, want)
	}
	if got := judge.RecordCounts(new(tab.Summary())); len(got) != report.MaxConnRecords || got[0] != (judge.ConnCounts{ID: 7, Requests: 3, Failed: 1}) {
		t.Errorf("Counts()[0] = %+v of %d; want {7 3 1} of %d", got[0], len(got), report.MaxConnRecords)
	}
}

// The JSON names are the documented snake_case ones, and an empty table
// writes empty lists, not null.
func TestConnsJSON(t *testing.T) {
	var tab ConnTable
	b, err := json.Marshal(tab.Summary())
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"connections":0,"requests":0,"failed":0,"records":[],"overflow":{"connections":0,"requests":0,"failed":0},"unconnected":{"requests":0,"failed":0},"repeat":[],"moments":[],"sizes":[],"windows":[],"windows_count":0}`; string(b) != want {
		t.Errorf("empty Conns = %s; want %s", b, want)
	}
	tab.Add(3, 51234, time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC), true, false)
	b, err = json.Marshal(tab.Summary().Records[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":3,"local_port":51234,"first":"2026-06-16T20:43:00.000Z","last":"2026-06-16T20:43:00.000Z","requests":1,"failed":1,"fresh":true}`; string(b) != want {
		t.Errorf("record = %s; want %s", b, want)
	}
	if strings.Contains(string(b), "null") {
		t.Errorf("record has a null: %s", b)
	}
}

// TestWindowCrossing: a window counts its connections that succeeded
// outside it, before or after, each once; connections that only ever
// failed are not counted.
func TestWindowCrossing(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var m moments
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// Connections 1 and 2 succeed; a window on 1, 2, 3 (3 new); a
	// success on 3 after it, and on 1 again; a second window on 4 and 5,
	// which never succeed; a last success on 1 closes it.
	m.add(1, at(0), false, false, false)
	m.add(2, at(10), false, false, false)
	for k := range 3 {
		m.add(1, at(100+30*k), true, k > 0, true)
		m.add(2, at(110+30*k), true, k > 0, true)
		m.add(3, at(120+30*k), k > 0, k > 0, true)
	}
	m.add(3, at(300), true, true, false)
	m.add(1, at(310), true, true, false)
	for k := range 3 {
		m.add(4, at(400+20*k), k > 0, k > 0, true)
		m.add(5, at(410+20*k), k > 0, k > 0, true)
	}
	m.add(1, at(500), true, false, false)
	_, _, wins, n := m.summary()
	if n != 2 || len(wins) != 2 {
		t.Fatalf("%d windows (%d listed); want 2: %+v", n, len(wins), wins)
	}
	if w := wins[0]; w.Connections != 3 || w.Crossing != 3 {
		t.Errorf("first window: %d connections, %d crossing; want 3 and 3 (1 and 2 before, 3 after)", w.Connections, w.Crossing)
	}
	if w := wins[1]; w.Connections != 2 || w.Crossing != 0 {
		t.Errorf("second window: %d connections, %d crossing; want 2 and 0", w.Connections, w.Crossing)
	}
}
