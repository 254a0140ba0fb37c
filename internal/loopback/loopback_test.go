package loopback

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"syscall"
	"testing"
)

var (
	lo4a = netip.MustParseAddr("127.0.0.1")
	lo4b = netip.MustParseAddr("127.0.0.2")
	// notHere is an address no machine has (TEST-NET-1): binding it fails
	// with EADDRNOTAVAIL, and nothing is ever sent to it.
	notHere = netip.MustParseAddr("192.0.2.1")
)

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}

func port(ln net.Listener) uint16 { return uint16(ln.Addr().(*net.TCPAddr).Port) }

// TestSamePortRetries takes, just before SamePort binds it, the port on
// 127.0.0.2 that its attempts chose on 127.0.0.1: it must give up that port
// (a real EADDRINUSE) and succeed with another.
func TestSamePortRetries(t *testing.T) {
	var taken []uint16
	listen := func(network, address string) (net.Listener, error) {
		ap := netip.MustParseAddrPort(address)
		if ap.Addr() == lo4b && len(taken) < 2 {
			ln, err := net.Listen(network, address)
			if err != nil {
				t.Skipf("cannot listen on %s: %v", address, err)
			}
			t.Cleanup(func() { ln.Close() })
			taken = append(taken, ap.Port())
		}
		return net.Listen(network, address)
	}
	b, err := SamePort([]netip.Addr{lo4a, lo4b}, Options{Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(b.Listeners)
	if len(taken) != 2 || slices.Contains(taken, b.Port) || len(b.Listeners) != 2 {
		t.Errorf("port %d, %d listeners after taking %v on 127.0.0.2; want a third port on both", b.Port, len(b.Listeners), taken)
	}
	for _, ln := range b.Listeners {
		if port(ln) != b.Port {
			t.Errorf("%s: want port %d", ln.Addr(), b.Port)
		}
	}
}

// TestSamePortPreferred: the preferred port is kept when it is free on
// every address; when it is held on one, another is taken and Taken names
// that address.
func TestSamePortPreferred(t *testing.T) {
	hold, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	want := port(hold)
	b, err := SamePort([]netip.Addr{lo4a, lo4b}, Options{Preferred: want})
	if err != nil {
		t.Fatal(err)
	}
	closeAll(b.Listeners)
	if b.Port == want || b.Taken != lo4b {
		t.Errorf("port %d while %d was held on 127.0.0.2, taken on %v; want another port, taken on 127.0.0.2", b.Port, want, b.Taken)
	}
	hold.Close()
	b, err = SamePort([]netip.Addr{lo4a, lo4b}, Options{Preferred: want})
	if err != nil {
		t.Fatal(err)
	}
	closeAll(b.Listeners)
	if b.Port != want || b.Taken.IsValid() {
		t.Errorf("port %d once free: took %d, taken on %v", want, b.Port, b.Taken)
	}
}

// TestSamePortMissingAddress: an address the machine lacks fails with an
// AddrError naming it, unless it is optional; the first address never is.
func TestSamePortMissingAddress(t *testing.T) {
	_, err := SamePort([]netip.Addr{lo4a, notHere}, Options{})
	var ae *AddrError
	if !errors.As(err, &ae) || ae.Addr != notHere || errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("err %v; want an AddrError of %s", err, notHere)
	}
	optional := func(netip.Addr) bool { return true }
	b, err := SamePort([]netip.Addr{lo4a, notHere}, Options{Optional: optional})
	if err != nil || len(b.Listeners) != 1 || b.Listeners[0].Addr().(*net.TCPAddr).AddrPort().Addr().Unmap() != lo4a {
		t.Errorf("optional %s: %v, %d listeners; want 127.0.0.1 alone", notHere, err, len(b.Listeners))
	}
	closeAll(b.Listeners)
	if _, err := SamePort([]netip.Addr{notHere, lo4a}, Options{Optional: optional}); !errors.As(err, &ae) || ae.Addr != notHere {
		t.Errorf("first address missing: %v; want its AddrError", err)
	}
	if _, err := SamePort(nil, Options{}); err == nil {
		t.Error("no address: no error")
	}
}
