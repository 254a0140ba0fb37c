package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/detect"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestBusiestBackends: with room for two values, the first two a host
// shows get series; a third, quiet one is "other"; a busy one that comes
// later takes the place of the least busy once it has twice its requests,
// whose series go; values seen once each never do; the counts are bounded
// and age (halved every Retire).
func TestBusiestBackends(t *testing.T) {
	at := time.Unix(1e9, 0)
	s := newBackendSet(at)
	see := func(v string, n int) (ok bool, demoted string) {
		for range n {
			ok, demoted = s.see(v, at, 2)
			if demoted != "" {
				return ok, demoted
			}
		}
		return ok, demoted
	}
	see("a", 5)
	see("b", 3)
	if ok, _ := see("c", 1); ok {
		t.Fatalf("c has series of its own; want other (a and b came first)")
	}
	ok, demoted := see("d", 10)
	if !ok || demoted != "b" {
		t.Fatalf("busy d: labelled %v, took the place of %q; want labelled in b's place", ok, demoted)
	}
	if s.sure("d") != 2*3+1 {
		t.Errorf("d took b's place at %d requests; want at twice b's and one more (7)", s.sure("d"))
	}
	// A thousand values seen once each (a header unique per request)
	// never take a place: their counts are the ones they inherited.
	for i := range 1000 {
		if ok, demoted := s.see(fmt.Sprint("v", i), at, 2); ok || demoted != "" {
			t.Fatalf("v%d, seen once, labelled %v in place of %q", i, ok, demoted)
		}
	}
	if len(s.counts) > candidates*2 {
		t.Errorf("%d values counted; want at most %d", len(s.counts), candidates*2)
	}
	s.halve(at.Add(time.Minute), time.Minute)
	if s.sure("a") != 2 {
		t.Errorf("a's count after a halving: %d; want 2 (of 5)", s.sure("a"))
	}

	// Through the watch: the demoted value's series go, the busy one's come.
	w := New(Options{GroupBy: []string{"X-Pod"}, Retire: time.Hour, MaxBackends: 2, Detector: detect.Default})
	eps := fleetOf(t, 1, 1)
	w.Started(eps[0], at)
	w.Answers([]report.DNS{{Host: "h0.test", Addresses: []string{"10.0.0.1"}}}, at)
	send := func(pod string, n int) {
		for i := range n {
			w.Results([]probe.Result{{Endpoint: eps[0].ID, Start: at.Add(time.Duration(i) * time.Millisecond), Latency: time.Millisecond,
				Status: 200, RequestID: "id", Groups: []string{pod}}})
		}
	}
	send("pod-a", 5)
	send("pod-b", 3)
	send("pod-busy", 10)
	text := gatherText(t, w)
	if !strings.Contains(text, `backend="pod-busy"`) || strings.Contains(text, `backend="pod-b"`) || !strings.Contains(text, `backend="pod-a"`) {
		t.Errorf("series after a busy value came: want pod-a and pod-busy, not pod-b:\n%s", text)
	}
}

// TestEventLine: a suspect's line gives the rest's own counts beside the
// rate it was tested against, which early on is well above them (a
// suspect found after 7 good requests elsewhere was said to stand out
// "against 6.3% for the rest", which had failed none).
func TestEventLine(t *testing.T) {
	ev := detect.Event{Start: true, Scope: detect.Scope{Host: "app.test", Kind: "address", Address: "127.0.0.2", Family: "ipv4"},
		At: time.Date(2026, 12, 5, 17, 59, 34, 0, time.UTC), Requests: 8, Failures: 8, Baseline: 0.0625, RestRequests: 7, RestFailures: 0,
		IDs: []string{"id-1", "id-2"}}
	want := "suspect: address 127.0.0.2 (ipv4) of app.test failing since 2026-12-05T17:59:34Z, 8 of 8 requests failed " +
		"against 0 of 7 for the rest (tested against 6.2%); request IDs id-1, id-2"
	if got := EventLine(ev); got != want {
		t.Errorf("event line\n%s\nwant\n%s", got, want)
	}
}

// TestVantageLabel: with a vantage, every series carries it; without, none.
func TestVantageLabel(t *testing.T) {
	at := time.Unix(1e9, 0)
	for _, vantage := range []string{"zone-a", ""} {
		w := New(Options{Retire: time.Hour, Vantage: vantage, Detector: detect.Default})
		eps := fleetOf(t, 1, 1)
		w.Started(eps[0], at)
		w.Answers([]report.DNS{{Host: "h0.test", Addresses: []string{"10.0.0.1"}}}, at)
		feed(w, eps, 3, at, 1, func(ep, i int) (int, bool) { return 200, false })
		for _, line := range strings.Split(gatherText(t, w), "\n") {
			if line != "" && strings.Contains(line, `vantage="zone-a"`) != (vantage != "") {
				t.Errorf("vantage %q: series %s", vantage, line)
			}
		}
	}
}
