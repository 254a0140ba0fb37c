package watch

import (
	"fmt"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/detect"
)

// TestSuspectsSinceTheStart: the watch lists its suspects since it began:
// an address that fails is listed from its start, ended when it fails
// like the rest again; one whose address left DNS is ended as retired
// when its series go.
func TestSuspectsSinceTheStart(t *testing.T) {
	w := New(Options{Retire: time.Minute, Detector: detect.Default})
	eps := fleetOf(t, 1, 3)
	at := time.Unix(1e9, 0)
	for _, ep := range eps {
		w.Started(ep, at)
	}
	feed(w, eps, 40, at, 1, func(ep, i int) (int, bool) {
		if ep == 1 {
			return 502, true
		}
		return 200, false
	})
	list := w.Suspects()
	var addr *Suspect
	for i := range list {
		if list[i].Scope.Kind == "address" {
			addr = &list[i]
		}
	}
	if addr == nil || addr.Scope.Address != "10.0.0.2" || !addr.Ended.IsZero() || len(addr.Start.IDs) == 0 ||
		addr.What != "address 10.0.0.2 (ipv4) of h0.test" {
		t.Fatalf("suspects %+v; want 10.0.0.2's, lasting, with request IDs", list)
	}
	feed(w, eps, 200, at.Add(40*time.Second), 1, func(ep, i int) (int, bool) { return 200, false })
	if s := w.Suspects(); s[0].Ended.IsZero() || s[0].Retired {
		t.Errorf("after 200 good requests each: %+v; want the suspect ended", s[0])
	}
	feed(w, eps, 40, at.Add(240*time.Second), 1, func(ep, i int) (int, bool) { return 502, ep == 2 })
	w.Stopped(eps[2], at.Add(280*time.Second))
	w.Tick(at.Add(400 * time.Second))
	var retired bool
	for _, s := range w.Suspects() {
		retired = retired || s.Scope.Address == "10.0.0.3" && s.Retired && !s.Ended.IsZero()
	}
	if !retired {
		t.Errorf("10.0.0.3 left DNS and its series were retired: %+v; want its suspect ended as retired", w.Suspects())
	}
}

// TestSuspectsBounded: the list keeps every suspect that lasts and the
// latest ended ones, at most maxEnded.
func TestSuspectsBounded(t *testing.T) {
	var h history
	at := time.Unix(1e9, 0)
	sc := func(i int) detect.Scope { return detect.Scope{Host: "h.test", Kind: "address", Address: fmt.Sprint(i)} }
	h.started(detect.Event{Start: true, Scope: sc(-1), At: at})
	for i := range 3 * maxEnded {
		h.started(detect.Event{Start: true, Scope: sc(i), At: at})
		h.ended(sc(i), at.Add(time.Second), false)
	}
	if len(h.list) != maxEnded+1 || h.list[0].Scope != sc(-1) || h.list[1].Scope != sc(2*maxEnded) {
		t.Errorf("%d kept, first %v, second %v; want the lasting one and the latest %d ended", len(h.list), h.list[0].Scope, h.list[1].Scope, maxEnded)
	}
}
