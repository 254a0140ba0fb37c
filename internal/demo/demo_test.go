package demo

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
)

// TestListenPrefersPort: the demo's gateway takes its port when it is
// free, so two demo runs have the same URL and compare matches them; when
// the port is taken it takes another port, the same on every loopback
// address, and says where it was taken. The test holds a port of its own
// as the demo's (Preferred): 47080 may be anyone's on a shared machine.
func TestListenPrefersPort(t *testing.T) {
	hold, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	want := hold.Addr().(*net.TCPAddr).Port
	Preferred = want
	defer func() { Preferred = Port }()
	lns, taken, err := listenSamePort()
	if err != nil {
		t.Fatal(err)
	}
	if p := ln0Port(lns); p == want || taken != "127.0.0.1" {
		t.Errorf("took port %d while %d was held, saying it was taken on %q; want another, taken on 127.0.0.1", p, want, taken)
	}
	for _, ln := range lns {
		if p := ln.Addr().(*net.TCPAddr).Port; p != ln0Port(lns) {
			t.Errorf("%s: port %d; want %d on every address", ln.Addr(), p, ln0Port(lns))
		}
		ln.Close()
	}
	hold.Close()
	lns, taken, err = listenSamePort()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	if p := ln0Port(lns); p != want || taken != "" {
		t.Errorf("port %d once free: took %d, saying it was taken on %q", want, p, taken)
	}
}

// TestUnreachableBackendIsHeld: the broken instance's backend port stays
// the demo's while it runs, so no other program can take it and get the
// demo's requests, and a connection to it is reset; Close frees it.
func TestUnreachableBackendIsHeld(t *testing.T) {
	g, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	ln := g.closers[0].(net.Listener)
	addr := ln.Addr().String()
	if other, err := net.Listen("tcp", addr); err == nil {
		other.Close()
		t.Errorf("another listener took the unreachable backend's %s while the demo ran", addr)
	}
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1))
		c.Close()
	}
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a connection to the unreachable backend: %v; want it reset or closed", err)
	}
	g.Close()
	if other, err := net.Listen("tcp", addr); err != nil {
		t.Errorf("after Close, %s is still held: %v", addr, err)
	} else {
		other.Close()
	}
}

// TestInstanceNames: an instance behind an address of its own has a name
// that reads as an instance's, as the shared address's gw-1 … gw-4 do; the
// join's "by instances gw-3 and gw-[::1]" read as an instance and an
// address.
func TestInstanceNames(t *testing.T) {
	for addr, want := range map[string]string{"::1": "gw-v6", "127.0.0.1": "gw-v4", "127.0.0.2": "gw-v4b", "127.0.0.200": "gw-v4-200"} {
		if got := addrInstance(netip.MustParseAddr(addr)); got != want {
			t.Errorf("addrInstance(%s) = %q; want %q", addr, got, want)
		}
	}
}
