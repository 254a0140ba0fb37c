package probe

import (
	"net"
	"net/netip"
)

// addrPortOf returns the IP and port of a TCP address, the zero value otherwise.
func addrPortOf(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}
