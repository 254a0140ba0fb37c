package probe

import (
	"maps"
	"net/http"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestAttackPinsEveryAddress serves one port on 127.0.0.1, 127.0.0.2 and
// [::1], the [::1] instance answering 502, and probes a host name pinned to
// each address. The servers' own per-address counts must equal pinprobe's
// per-endpoint counts exactly, every request must carry the host name, and
// only the 502 address may yield 502s; on both request paths.
func TestAttackPinsEveryAddress(t *testing.T) {
	t.Parallel()
	eachClient(t, testAttackPinsEveryAddress)
}

func testAttackPinsEveryAddress(t *testing.T, client ClientKind) {
	const bad = "::1"
	h := testserver.NewHits()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Add(r)
		if testserver.LocalAddr(r).Addr() == netip.MustParseAddr(bad) {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		w.Write([]byte("ok\n"))
	})
	addrs := []netip.Addr{testserver.Lo4a, testserver.Lo4b, testserver.Lo6}
	port := testserver.ServeSamePort(t, handler, nil, addrs...)
	eps := endpoints(t, hostURL("http", port), addrs...)

	all := attack(t, eps, Options{Rate: 300, Duration: 500 * time.Millisecond, Concurrency: 10, Client: client}, 10*time.Second)
	rs, tl := sentOnly(all), tallyOf(all)

	got := map[netip.Addr]int{}
	for _, r := range rs {
		ep := eps[r.Endpoint]
		got[ep.Addr]++
		if want := ep.AddrPort(); r.Remote != want {
			t.Errorf("endpoint %s: Remote = %v; want %v", ep, r.Remote, want)
		}
		if r.Local.Addr().Is4() != ep.Addr.Is4() {
			t.Errorf("endpoint %s: Local = %v, other family than the pinned address", ep, r.Local)
		}
		if r.Err != nil {
			t.Errorf("endpoint %s: %v", ep, r.Err)
		}
		want := http.StatusOK
		if ep.Addr == netip.MustParseAddr(bad) {
			want = http.StatusBadGateway
		}
		if r.Status != want {
			t.Errorf("endpoint %s: status %d; want %d", ep, r.Status, want)
		}
	}
	served, hosts := h.Snapshot()
	if !maps.Equal(got, served) {
		t.Errorf("per-address counts: pinprobe %v; servers %v", got, served)
	}
	// 50 requests are due per address; a loaded machine may drop some
	// (the open model never queues), but each address gets its share.
	for _, ep := range eps {
		if sent, due := tl.sent[ep.ID], tl.sent[ep.ID]+tl.dropped[ep.ID]; due < 45 || sent < 10 {
			t.Errorf("%s: %d requests sent, %d due; want about 50 due, most sent", ep.Addr, sent, due)
		}
	}
	wantHost := testHost + ":" + strconv.Itoa(int(port))
	if len(hosts) != 1 || hosts[wantHost] != len(rs) {
		t.Errorf("Host headers seen: %v; want only %q (%d times)", hosts, wantHost, len(rs))
	}
}
