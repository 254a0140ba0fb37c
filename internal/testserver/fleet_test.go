package testserver

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"testing"
	"time"
)

func TestFleet(t *testing.T) {
	t.Parallel()
	addrs := AvailableLoopbacks()
	last := addrs[len(addrs)-1]
	f := StartFleet(t, FleetOptions{Policies: map[netip.Addr]Policy{
		last: Status(http.StatusBadGateway),
		Lo4a: Every(2, Answer{Status: http.StatusServiceUnavailable, Header: map[string]string{"Server": "fx/1.0"}}),
	}}, addrs...)
	if got, want := f.URL(), fmt.Sprintf("http://app.test:%d/", f.Port()); got != want {
		t.Errorf("URL() = %q; want %q", got, want)
	}
	wantStatus := map[netip.Addr][]int{Lo4a: {200, 503, 200, 503}, last: {502, 502, 502, 502}}
	for _, a := range addrs {
		c := pinnedClient(t, netip.AddrPortFrom(a, f.Port()), nil, true)
		for i := range 4 {
			id := fmt.Sprintf("%s-%d", a, i)
			code, h, body := get(t, c, f.URL(), "X-Request-Id", id)
			want := 200
			if w, ok := wantStatus[a]; ok {
				want = w[i]
			}
			if code != want || h.Get("X-Request-Id") != id || body != fmt.Sprintf("%s answers %d\n", a, want) {
				t.Errorf("%s request %d: %d, id %q, body %q; want %d, id %q, body naming the address",
					a, i, code, h.Get("X-Request-Id"), body, want, id)
			}
		}
	}
	// One request with a wrong Host header and no ID, one with two IDs.
	c := pinnedClient(t, netip.AddrPortFrom(Lo4a, f.Port()), nil, false)
	get(t, c, fmt.Sprintf("http://other.test:%d/", f.Port()))
	get(t, c, f.URL(), "X-Request-Id", "a", "X-Request-Id", "b")

	wantHits := map[string]int64{}
	for _, a := range addrs {
		wantHits[a.String()] = 4
	}
	wantHits["127.0.0.1"] = 6
	if got := f.Hits(); !maps.Equal(got, wantHits) || f.Total() != int64(4*len(addrs)+2) {
		t.Errorf("Hits() = %v, Total() = %d; want %v", got, f.Total(), wantHits)
	}
	b := f.Backend(t, Lo4a)
	if b.Misplaced() != 1 {
		t.Errorf("Lo4a Misplaced() = %d; want 1 (the other.test request)", b.Misplaced())
	}
	for _, a := range addrs[1:] {
		if n := f.Backend(t, a).Misplaced(); n != 0 {
			t.Errorf("%s Misplaced() = %d; want 0", a, n)
		}
	}
	if !b.SawID("127.0.0.1-3") || b.SawID(last.String()+"-0") && last != Lo4a {
		t.Errorf("SawID: 127.0.0.1 must have seen its own IDs only")
	}
	ids, missing, multiple := f.IDs()
	if len(ids) != 4*len(addrs)+2 || missing != 1 || multiple != 1 {
		t.Errorf("IDs(): %d distinct, %d missing, %d multiple; want %d, 1, 1", len(ids), missing, multiple, 4*len(addrs)+2)
	}
	clientAddrs, ports := f.Clients()
	// Linux dials 127.0.0.2 from 127.0.0.1; one keep-alive connection per
	// address and two more make the ports.
	wantClients := []netip.Addr{Lo4a}
	if last == Lo6 {
		wantClients = append(wantClients, Lo6)
	}
	if !slices.Equal(clientAddrs, wantClients) || len(ports) != len(addrs)+2 {
		t.Errorf("Clients() = %v, %d ports; want %v and %d ports", clientAddrs, len(ports), wantClients, len(addrs)+2)
	}
	seen := f.Backend(t, last).Seen()
	for i, s := range seen {
		if s.N != int64(i+1) || s.Local != netip.AddrPortFrom(last, f.Port()) || s.Remote.Addr() != last ||
			s.Host != hostPort("app.test", f.Port()) || s.Status != 502 || s.Proto != "HTTP/1.1" || s.At.IsZero() {
			t.Errorf("%s seen[%d] = %+v", last, i, s)
		}
	}
	if arr := f.Backend(t, last).Arrivals(); len(arr) != 4 || arr[3].Before(arr[0]) {
		t.Errorf("Arrivals() = %v; want 4 in order", arr)
	}
	if f.Resolve("127.0.0.3") != fmt.Sprintf("app.test:%d:%s,127.0.0.3", f.Port(), joinAddrs(addrs)) {
		t.Errorf("Resolve() = %q", f.Resolve("127.0.0.3"))
	}
}

func joinAddrs(addrs []netip.Addr) string {
	s := ""
	for i, a := range addrs {
		if i > 0 {
			s += ","
		}
		s += a.String()
	}
	return s
}

// TestFleetHold holds the requests from the 2nd on until Release.
func TestFleetHold(t *testing.T) {
	t.Parallel()
	f := StartFleet(t, FleetOptions{NotifyAt: 2, Hold: true}, Lo4a)
	c := pinnedClient(t, netip.AddrPortFrom(Lo4a, f.Port()), nil, false)
	get(t, c, f.URL())
	done := make(chan int, 1)
	go func() {
		resp, err := c.Get(f.URL())
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case <-f.Reached():
	case <-time.After(5 * time.Second):
		t.Fatal("Reached() not closed after the 2nd request")
	}
	waitFor(t, 5*time.Second, "held request in flight", func() bool { return f.InFlight() == 1 })
	select {
	case code := <-done:
		t.Fatalf("held request answered %d before Release", code)
	case <-time.After(50 * time.Millisecond):
	}
	f.Release()
	if code := <-done; code != http.StatusOK {
		t.Errorf("held request: status %d; want 200 after Release", code)
	}
}

// TestFleetHoldEndsWithTest proves a request held forever does not hold up
// the test's cleanup: the test ends, the server closes, the client sees it.
func TestFleetHoldEndsWithTest(t *testing.T) {
	t.Parallel()
	var f *Fleet
	errc := make(chan error, 1)
	t.Run("held", func(t *testing.T) {
		f = StartFleet(t, FleetOptions{Each: func(n int64, r *http.Request) Answer { return Answer{Hold: true, Delay: time.Hour} }}, Lo4a)
		c := pinnedClient(t, netip.AddrPortFrom(Lo4a, f.Port()), nil, false)
		go func() {
			resp, err := c.Get(f.URL())
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		waitFor(t, 5*time.Second, "request in flight", func() bool { return f.InFlight() == 1 })
	})
	select {
	case <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("the held request outlived its test by 5s")
	}
}

func TestFleetTLS(t *testing.T) {
	t.Parallel()
	pki := NewPKI(t)
	f := StartFleet(t, FleetOptions{PKI: pki, Host: "secure.test"}, Lo4a)
	c := pinnedClient(t, netip.AddrPortFrom(Lo4a, f.Port()), pki.ClientConfig(""), false)
	if code, _, _ := get(t, c, f.URL()); code != http.StatusOK {
		t.Fatalf("status %d; want 200", code)
	}
	s := f.Seen()
	if len(s) != 1 || s[0].SNI != "secure.test" || s[0].Proto != "HTTP/2.0" {
		t.Errorf("Seen() = %+v; want one HTTP/2 request with SNI secure.test", s)
	}
	f.CheckPlacement(t)
}

func TestFleetH2C(t *testing.T) {
	t.Parallel()
	f := StartFleet(t, FleetOptions{H2C: true}, Lo4a)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	c := pinnedClient(t, netip.AddrPortFrom(Lo4a, f.Port()), nil, false)
	c.Transport.(*http.Transport).Protocols = &p
	get(t, c, f.URL())
	if s := f.Seen(); len(s) != 1 || s[0].Proto != "HTTP/2.0" {
		t.Errorf("Seen() = %+v; want one h2c request", s)
	}
}

func TestRandomIsSeeded(t *testing.T) {
	t.Parallel()
	run := func(seed uint64) []int {
		p := Random(0.3, seed, Answer{Status: 502})
		out := make([]int, 200)
		for i := range out {
			out[i] = p(int64(i+1), nil).Status
		}
		return out
	}
	a, b := run(7), run(7)
	fails := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7 gave different answers at %d: %d, %d", i, a[i], b[i])
		}
		if a[i] == 502 {
			fails++
		}
	}
	if fails < 30 || fails > 90 {
		t.Errorf("%d of 200 failed at p=0.3; want about 60", fails)
	}
}
