package testserver

import (
	"errors"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/loopback"
)

// The loopback addresses the tests serve on. 127.0.0.2 and the others
// need no configuration on Linux (all of 127/8 is local); [::1] needs IPv6.
var (
	Lo4a = netip.MustParseAddr("127.0.0.1")
	Lo4b = netip.MustParseAddr("127.0.0.2")
	Lo4c = netip.MustParseAddr("127.0.0.3")
	Lo4d = netip.MustParseAddr("127.0.0.4")
	Lo6  = netip.MustParseAddr("::1")
)

// Loopbacks returns Lo4a, Lo4b and Lo6: the usual addresses of a fleet.
func Loopbacks() []netip.Addr { return []netip.Addr{Lo4a, Lo4b, Lo6} }

// AvailableLoopbacks returns those of Lo4a, Lo4b and Lo6 this machine can
// listen on, in that order, for a test that serves on whatever there is
// rather than skipping where an address is missing.
func AvailableLoopbacks() []netip.Addr {
	var out []netip.Addr
	for _, a := range Loopbacks() {
		ln, err := net.Listen("tcp", netip.AddrPortFrom(a, 0).String())
		if err != nil {
			continue
		}
		ln.Close()
		out = append(out, a)
	}
	return out
}

// HasIPv6Loopback reports whether this machine can listen on [::1].
func HasIPv6Loopback() bool {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// ListenSamePort binds one TCP port on every address: a free port chosen on
// the first, then the same port on the others, starting over with a new
// port when one is taken there (EADDRINUSE). It skips the test when the
// machine lacks an address (127.0.0.2 on macOS, ::1 without IPv6); pass
// AvailableLoopbacks() to serve on whatever there is instead. The listeners
// are closed when the test ends.
func ListenSamePort(t testing.TB, addrs ...netip.Addr) (uint16, []net.Listener) {
	t.Helper()
	b, err := loopback.SamePort(addrs, loopback.Options{})
	var missing *loopback.AddrError
	switch {
	case errors.As(err, &missing) && !errors.Is(err, syscall.EADDRINUSE):
		t.Skipf("this machine %v", err)
	case err != nil:
		t.Fatalf("testserver: %v", err)
	}
	t.Cleanup(func() { closeAll(b.Listeners) })
	return b.Port, b.Listeners
}

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}

// FreePort returns a TCP port that was free on every address a moment ago,
// for a process that binds it itself (nginx, HAProxy). Another process may
// take it in between; the launchers detect that (see StartProcess).
func FreePort(t testing.TB, addrs ...netip.Addr) uint16 {
	t.Helper()
	port, lns := ListenSamePort(t, addrs...)
	closeAll(lns)
	return port
}

// ClosedPort returns a port of addr nothing listens on: a connection to it
// is refused. The port stays bound (never listening) until the test ends,
// so no other listener can take it meanwhile.
func ClosedPort(t testing.TB, addr netip.Addr) uint16 {
	t.Helper()
	port, release, err := bindNoListen(addr)
	if err != nil {
		t.Fatalf("testserver: closed port on %s: %v", addr, err)
	}
	t.Cleanup(release)
	return port
}

// ClosedAddrPort is ClosedPort as an address and port.
func ClosedAddrPort(t testing.TB, addr netip.Addr) netip.AddrPort {
	t.Helper()
	return netip.AddrPortFrom(addr, ClosedPort(t, addr))
}

// bindNoListen binds a TCP socket to addr and a free port without listening.
func bindNoListen(addr netip.Addr) (uint16, func(), error) {
	addr = addr.Unmap()
	family, sa := syscall.AF_INET6, syscall.Sockaddr(&syscall.SockaddrInet6{Addr: addr.As16()})
	if addr.Is4() {
		family, sa = syscall.AF_INET, &syscall.SockaddrInet4{Addr: addr.As4()}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, err
	}
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return 0, nil, err
	}
	got, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return 0, nil, err
	}
	var port int
	switch got := got.(type) {
	case *syscall.SockaddrInet4:
		port = got.Port
	case *syscall.SockaddrInet6:
		port = got.Port
	}
	return uint16(port), func() { syscall.Close(fd) }, nil
}

// FullBacklog returns the port of a 127.0.0.1 socket that listens with a
// backlog of 0, never accepts, and whose accept queue is already full, so
// the kernel drops further SYNs and a connect can only time out. It skips
// the test off Linux, or where the queue never fills up.
func FullBacklog(t testing.TB) uint16 {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("relies on Linux dropping SYNs to a full accept queue")
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: Lo4a.As4()}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := uint16(sa.(*syscall.SockaddrInet4).Port)
	addr := netip.AddrPortFrom(Lo4a, port).String()
	for i := 0; ; i++ {
		if i == 10 {
			t.Skip("accept queue never filled up")
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	return port
}

// addrPortOf converts a net.Addr of a TCP or UDP socket to a netip.AddrPort
// with the address unmapped; the zero value for anything else.
func addrPortOf(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.TCPAddr:
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	case *net.UDPAddr:
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// hostPort joins a host name or address and a port.
func hostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}
