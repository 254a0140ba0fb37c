package testserver

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestListenSamePort(t *testing.T) {
	t.Parallel()
	addrs := AvailableLoopbacks()
	if len(addrs) == 0 || addrs[0] != Lo4a {
		t.Fatalf("AvailableLoopbacks() = %v; want 127.0.0.1 first", addrs)
	}
	if got, want := slices.Contains(addrs, Lo6), HasIPv6Loopback(); got != want {
		t.Errorf("AvailableLoopbacks has ::1: %v; HasIPv6Loopback: %v", got, want)
	}
	port, lns := ListenSamePort(t, addrs...)
	if len(lns) != len(addrs) {
		t.Fatalf("got %d listeners; want %d", len(lns), len(addrs))
	}
	for i, ln := range lns {
		if got, want := addrPortOf(ln.Addr()), netip.AddrPortFrom(addrs[i], port); got != want {
			t.Errorf("listener %d on %s; want %s", i, got, want)
		}
	}
	// The port is taken on each address: a second bind fails.
	for _, a := range addrs {
		ln, err := net.Listen("tcp", netip.AddrPortFrom(a, port).String())
		if err == nil {
			ln.Close()
			t.Errorf("listen on %s:%d succeeded; want EADDRINUSE", a, port)
		}
	}
}

func TestClosedPort(t *testing.T) {
	t.Parallel()
	for _, a := range AvailableLoopbacks() {
		ap := ClosedAddrPort(t, a)
		_, err := net.DialTimeout("tcp", ap.String(), 2*time.Second)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial %s: %v; want connection refused", ap, err)
		}
		ln, err := net.Listen("tcp", ap.String())
		if err == nil {
			ln.Close()
			t.Errorf("listen on closed port %s succeeded; want it kept bound", ap)
		}
	}
}

func TestFullBacklog(t *testing.T) {
	t.Parallel()
	port := FullBacklog(t)
	start := time.Now()
	_, err := net.DialTimeout("tcp", netip.AddrPortFrom(Lo4a, port).String(), 200*time.Millisecond)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("dial after %v: %v; want a timeout", time.Since(start), err)
	}
}

func TestServeSamePortHits(t *testing.T) {
	t.Parallel()
	addrs := AvailableLoopbacks()
	hits := NewHits()
	port := ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(r) }), nil, addrs...)
	for _, a := range addrs {
		c := pinnedClient(t, netip.AddrPortFrom(a, port), nil, false)
		for range 2 {
			if code, _, _ := get(t, c, "http://"+hostPort(DefaultHost, port)+"/"); code != http.StatusOK {
				t.Errorf("%s: status %d; want 200", a, code)
			}
		}
	}
	byAddr, hosts := hits.Snapshot()
	for _, a := range addrs {
		if byAddr[a] != 2 {
			t.Errorf("hits on %s = %d; want 2", a, byAddr[a])
		}
	}
	if got, want := hosts[hostPort(DefaultHost, port)], 2*len(addrs); got != want || hits.Total() != want {
		t.Errorf("Host %s seen %d times, total %d; want %d", hostPort(DefaultHost, port), got, hits.Total(), want)
	}
}
