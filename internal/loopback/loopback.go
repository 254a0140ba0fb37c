package loopback

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Options tune SamePort.
type Options struct {
	// Preferred is the port tried first (0: none): kept when it is free on
	// every address, else another is taken and Bound.Taken says where it
	// was not free.
	Preferred uint16
	// Optional says whether an address the machine lacks may be left out
	// (the demo goes on without 127.0.0.2 or ::1); otherwise SamePort
	// fails with its AddrError. The first address is never optional.
	Optional func(netip.Addr) bool
	// Listen replaces net.Listen (a test takes a port just before it is
	// bound).
	Listen func(network, address string) (net.Listener, error)
}

// Bound is what SamePort bound.
type Bound struct {
	Port      uint16
	Listeners []net.Listener // in the order of the addresses, less those left out
	Taken     netip.Addr     // where Options.Preferred was in use; invalid when it was not
}

// AddrError is an address SamePort could not listen on: its port was in
// use (EADDRINUSE, and SamePort tries another), or the machine lacks the
// address (127.0.0.2 on macOS, ::1 without IPv6).
type AddrError struct {
	Addr netip.Addr
	Err  error
}

func (e *AddrError) Error() string { return fmt.Sprintf("cannot listen on %s: %v", e.Addr, e.Err) }
func (e *AddrError) Unwrap() error { return e.Err }

// tries is how many ports SamePort tries before it gives up.
const tries = 50

// SamePort binds one port on every address: Options.Preferred if it is
// free on all, else a free port chosen on the first and then taken on the
// others, starting over with a new one when it is in use there
// (EADDRINUSE).
func SamePort(addrs []netip.Addr, o Options) (Bound, error) {
	if len(addrs) == 0 {
		return Bound{}, errors.New("loopback: no address to listen on")
	}
	listen := o.Listen
	if listen == nil {
		listen = net.Listen
	}
	var b Bound
	var lastErr error
	for try := range tries {
		port := uint16(0)
		if try == 0 {
			port = o.Preferred
		}
		lns, err := bindAll(addrs, port, o.Optional, listen)
		switch {
		case err == nil:
			b.Port, b.Listeners = uint16(lns[0].Addr().(*net.TCPAddr).Port), lns
			return b, nil
		case !errors.Is(err, syscall.EADDRINUSE):
			return Bound{}, err
		case try == 0 && o.Preferred != 0:
			b.Taken = err.Addr
		}
		lastErr = err
	}
	return Bound{}, fmt.Errorf("loopback: no port free on all of %v: %w", addrs, lastErr)
}

// bindAll listens on port (0: any, chosen on the first address) of every
// address; on an error it closes what it bound and says which address.
func bindAll(addrs []netip.Addr, port uint16, optional func(netip.Addr) bool, listen func(network, address string) (net.Listener, error)) ([]net.Listener, *AddrError) {
	var lns []net.Listener
	for i, a := range addrs {
		ln, err := listen("tcp", netip.AddrPortFrom(a, port).String())
		switch {
		case err == nil:
			lns = append(lns, ln)
			port = uint16(ln.Addr().(*net.TCPAddr).Port)
			continue
		case i > 0 && optional != nil && optional(a) && !errors.Is(err, syscall.EADDRINUSE):
			continue // this machine has no such address: go on without it
		}
		for _, ln := range lns {
			ln.Close()
		}
		return nil, &AddrError{Addr: a, Err: err}
	}
	return lns, nil
}
