package session

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// noSink is a watch's sink that sees nothing: the windows are under test.
type noSink struct{}

func (noSink) Started(*probe.Endpoint, time.Time) {}
func (noSink) Stopped(*probe.Endpoint, time.Time) {}
func (noSink) Answers([]report.DNS, time.Time)    {}
func (noSink) Results([]probe.Result)             {}
func (noSink) Tick(time.Time)                     {}

// watchWindows watches two addresses (127.0.0.2 answering 502) for 3.5 s
// on the clock of a synctest bubble, in windows of 1 s, reading the window
// in progress every look (0: never). It returns the windows' reports as
// written and read back, and how many requests the engine sent.
func watchWindows(t *testing.T, look time.Duration) (reps []*report.Report, sent int64) {
	a, b := testserver.Lo4a, testserver.Lo4b
	tg, err := probe.ParseTarget("http://windows.test/")
	if err != nil {
		t.Fatal(err)
	}
	var run engine
	synth := startSynth(map[netip.Addr]int{a: http.StatusOK, b: http.StatusBadGateway}, 100*time.Millisecond)
	cfg := Config{
		Targets:  []*probe.Target{tg},
		Resolver: &probe.Resolver{Static: map[string][]netip.Addr{probe.StaticKey("windows.test", 80): {a, b}}},
		Engine:   probe.Options{Rate: 20, Duration: 3500 * time.Millisecond},
		Meta:     report.Report{Version: "test", Command: []string{"pinprobe", "watch", "http://windows.test/"}},
		start: func(ctx context.Context, eps []*probe.Endpoint, o probe.Options) (engine, error) {
			e, err := synth(ctx, eps, o)
			run = e
			return e, err
		},
	}
	s, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	win := s.Windows(time.Second, func(r *report.Report) {
		var buf bytes.Buffer
		if err := report.JSON(&buf, r); err != nil {
			t.Error(err)
		}
		back, err := report.Parse(buf.Bytes(), "window")
		if err != nil {
			t.Errorf("a window's report does not read back: %v", err)
			return
		}
		mu.Lock()
		reps = append(reps, back)
		mu.Unlock()
	})
	done := make(chan struct{})
	if look > 0 {
		go func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(look):
					if cur := win.Current(); cur != nil {
						if _, err := report.Parse(cur, "current"); err != nil {
							t.Errorf("the window in progress does not read back: %v", err)
						}
					}
				}
			}
		}()
	}
	if err := s.Watch(t.Context(), noSink{}, win); err != nil {
		t.Fatal(err)
	}
	close(done)
	if last := win.Last(); !bytes.Contains(last, []byte(`"schema"`)) {
		t.Errorf("Last after the watch: %.80q; want the last window's report", last)
	}
	return reps, run.Sent()
}

// TestClockWindows: a watch in windows of 1 s that runs 3.5 s hands over
// four reports, three of a second and the last of half a second, each
// judged on its own (the 502s of 127.0.0.2 named), each a saved report
// that reads back; together they hold every request sent, once. Reading
// the window in progress while it fills (the live page) changes none of
// them.
func TestClockWindows(t *testing.T) {
	var quiet, looked []*report.Report
	var sent [2]int64
	synctest.Test(t, func(t *testing.T) { quiet, sent[0] = watchWindows(t, 0) })
	synctest.Test(t, func(t *testing.T) { looked, sent[1] = watchWindows(t, 30*time.Millisecond) })
	if len(quiet) != 4 {
		t.Fatalf("%d windows; want 4 (3 s and a half in windows of 1 s)", len(quiet))
	}
	var total int64
	for i, r := range quiet {
		d := r.EndedAt.Sub(r.StartedAt.Time)
		want := time.Second
		if i == 3 {
			want = 500 * time.Millisecond
		}
		if d != want {
			t.Errorf("window %d lasts %v; want %v", i, d, want)
		}
		if i > 0 && !r.StartedAt.Equal(quiet[i-1].EndedAt.Time) {
			t.Errorf("window %d starts at %v, not where the one before ended (%v)", i, r.StartedAt, quiet[i-1].EndedAt)
		}
		total += r.Totals.Requests
		if r.Verdict.Status == "OK" || !contains(r.Verdict.Summary, "127.0.0.2") {
			t.Errorf("window %d: verdict %s %q; want 127.0.0.2's 502s named", i, r.Verdict.Status, r.Verdict.Summary)
		}
		if r.RunID != "5e5e5e5e" || r.Plan.DurationS != 1 {
			t.Errorf("window %d: run %q, planned %g s; want the watch's run and the window's length", i, r.RunID, r.Plan.DurationS)
		}
		if l := looked[min(i, len(looked)-1)]; !reflect.DeepEqual(l.Totals, r.Totals) || !reflect.DeepEqual(l.Endpoints, r.Endpoints) {
			t.Errorf("window %d read while it filled: %+v; want the same as unread: %+v", i, l.Totals, r.Totals)
		}
	}
	// Each window says which of the run's request IDs it counts: together,
	// every one of each endpoint, 1 to its last, once.
	for ep := range 2 {
		var all []report.IDRange
		for _, r := range quiet {
			if !r.Part {
				t.Errorf("a window's report is not marked a part of its run")
			}
			all = append(all, r.Endpoints[ep].IDRanges...)
		}
		slices.SortFunc(all, func(a, b report.IDRange) int { return cmp.Compare(a.First, b.First) })
		next := int64(1)
		for _, r := range all {
			if r.First != next {
				t.Errorf("endpoint %d: the windows' ranges %v leave a gap or overlap at %d", ep, all, next)
				break
			}
			next = r.Last + 1
		}
		if next-1 != sent[0]/2 {
			t.Errorf("endpoint %d: the windows count IDs 1 to %d; want 1 to %d", ep, next-1, sent[0]/2)
		}
	}
	if total != sent[0] || len(looked) != len(quiet) {
		t.Errorf("the windows hold %d requests of %d sent (%d windows when read while filling); want every one, once", total, sent[0], len(looked))
	}
}

func contains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

// TestWindowsDNS: a window's DNS says its own looks and missed looks, not
// the watch's since its start, and its own changes; the watch's records,
// changed after each look, are copied.
func TestWindowsDNS(t *testing.T) {
	w := &Windows{every: time.Minute, s: &Session{}}
	at := time.Unix(1e9, 0).UTC()
	w.begin("5e5e5e5e", at, nil)
	dns := []report.DNS{{Host: "a.test", Addresses: []string{"127.0.0.1"}, Changes: []report.DNSChange{}}}
	look := func(missed bool, change bool) {
		dns[0].Looks++
		if missed {
			if dns[0].Missed == nil {
				dns[0].Missed = &report.DNSMissed{First: report.Time{Time: at}}
			}
			dns[0].Missed.Looks++
			dns[0].Missed.Last, dns[0].Missed.Error = report.Time{Time: at.Add(time.Duration(dns[0].Looks) * time.Second)}, "timed out"
		}
		dns[0].Changes = dns[0].Changes[:0]
		if change {
			dns[0].Changes = append(dns[0].Changes, report.DNSChange{At: report.Time{Time: at}, Added: []string{"127.0.0.2"}, Removed: []string{}})
		}
		w.answers(dns)
	}
	look(true, false)
	look(false, true)
	look(false, false)
	w.mu.Lock()
	w.open(at.Add(time.Minute))
	w.mu.Unlock()
	look(false, false)
	look(true, false)
	got := w.dns[0]
	if got.Looks != 2 || got.Missed == nil || got.Missed.Looks != 1 || !got.Missed.First.Equal(dns[0].Missed.Last.Time) || len(got.Changes) != 0 {
		t.Errorf("the second window's DNS: %d looks, missed %+v, %d changes; want its own 2 looks, 1 missed (the last), no change", got.Looks, got.Missed, len(got.Changes))
	}
	dns[0].Missed.Error = "changed after the call"
	if got.Missed.Error != "timed out" {
		t.Errorf("the window's missed looks share the watch's record")
	}
}
