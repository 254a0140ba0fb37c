package testserver

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

func TestStickyRoundRobin(t *testing.T) {
	t.Parallel()
	addrs := []netip.Addr{Lo4a}
	if HasIPv6Loopback() {
		addrs = append(addrs, Lo6)
	}
	s := StartSticky(t, StickyOptions{Instances: []Instance{
		{Name: "gw-0"},
		{Name: "gw-1", Policy: Every(2, Answer{Status: http.StatusBadGateway})},
		{Name: "gw-2", Policy: Status(http.StatusBadGateway)},
	}}, addrs...)
	const conns, reqs = 6, 4
	for i := range conns {
		rc := dialRaw(t, netip.AddrPortFrom(addrs[i%len(addrs)], s.Port()))
		want := fmt.Sprintf("gw-%d", i%3)
		var failures int64
		for range reqs {
			resp, body := rc.do("app.test")
			if got := resp.Header.Get("X-Served-By"); got != want {
				t.Errorf("connection %d: served by %q; want %q on every request", i, got, want)
			}
			if body != fmt.Sprintf("%s answers %d\n", want, resp.StatusCode) {
				t.Errorf("connection %d: body %q", i, body)
			}
			if resp.StatusCode >= 500 {
				failures++
			}
		}
		cs, ok := s.Conn(rc.local())
		if !ok || cs.Instance != want || cs.Requests != reqs || cs.Failures != failures || cs.Local.Port() != s.Port() {
			t.Errorf("Conn(%s) = %+v, %v; want instance %s, %d requests, %d failures", rc.local(), cs, ok, want, reqs, failures)
		}
	}
	// gw-1 numbers its requests over both its connections: 2 of 4 fail on each.
	want := map[string]InstanceStats{
		"gw-0": {Conns: 2, Requests: 8},
		"gw-1": {Conns: 2, Requests: 8, Failures: 4},
		"gw-2": {Conns: 2, Requests: 8, Failures: 8},
	}
	got := s.Stats()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("Stats()[%s] = %+v; want %+v", name, got[name], w)
		}
	}
	if n := len(s.Conns()); n != conns {
		t.Errorf("Conns() has %d connections; want %d", n, conns)
	}
}

// TestStickyRandomSeeded assigns connections at random: the same seed
// gives the same sequence of instances.
func TestStickyRandomSeeded(t *testing.T) {
	t.Parallel()
	seq := func() []string {
		s := StartSticky(t, StickyOptions{Assign: RandomAssignment, Seed: 42, Header: "X-Gw",
			Instances: []Instance{{Name: "a"}, {Name: "b"}, {Name: "c"}}})
		var out []string
		for range 12 {
			resp, _ := dialRaw(t, netip.AddrPortFrom(Lo4a, s.Port())).do("app.test")
			out = append(out, resp.Header.Get("X-Gw"))
		}
		return out
	}
	a, b := seq(), seq()
	distinct := map[string]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 42: %v then %v; want the same sequence", a, b)
		}
		distinct[a[i]] = true
	}
	if len(distinct) < 2 {
		t.Errorf("12 connections all went to %v; want a random spread", a)
	}
}

// TestStickyHold holds an instance's answers until Release.
func TestStickyHold(t *testing.T) {
	t.Parallel()
	s := StartSticky(t, StickyOptions{Instances: []Instance{{Name: "slow", Policy: func(n int64, r *http.Request) Answer {
		return Answer{Hold: true, Status: http.StatusAccepted}
	}}}})
	rc := dialRaw(t, netip.AddrPortFrom(Lo4a, s.Port()))
	done := make(chan int, 1)
	go func() {
		io.WriteString(rc.c, "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
		resp, err := http.ReadResponse(rc.br, nil)
		if err != nil {
			done <- 0
			return
		}
		done <- resp.StatusCode
	}()
	select {
	case code := <-done:
		t.Fatalf("answered %d before Release", code)
	case <-time.After(50 * time.Millisecond):
	}
	s.Release()
	if code := <-done; code != http.StatusAccepted {
		t.Errorf("after Release: %d; want 202", code)
	}
}

// TestStickyNoHeader names no instance: only the connection tells them apart.
func TestStickyNoHeader(t *testing.T) {
	t.Parallel()
	s := StartSticky(t, StickyOptions{NoHeader: true, Instances: []Instance{
		{Name: "a"}, {Name: "b", Policy: Status(http.StatusBadGateway)},
	}})
	if s.Header() != "" {
		t.Errorf("Header() = %q; want \"\"", s.Header())
	}
	for i, want := range []int{200, 502} {
		rc := dialRaw(t, netip.AddrPortFrom(Lo4a, s.Port()))
		resp, _ := rc.do("app.test")
		if resp.StatusCode != want || resp.Header.Get("X-Served-By") != "" {
			t.Errorf("connection %d: %d, X-Served-By %q; want %d and no instance header", i, resp.StatusCode, resp.Header.Get("X-Served-By"), want)
		}
	}
}
