//go:build unix

package probe

import (
	"net"
	"syscall"
)

// initIdleCheck prepares peerGone for the TCP connection raw.
func (c *h1Conn) initIdleCheck(raw net.Conn) {
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	c.rawConn = rc
	c.peek = func(fd uintptr) { _, c.peekErr = syscall.Read(int(fd), c.peekBuf[:]) }
}

// peerGone reports whether the server closed or reset the idle connection,
// or sent bytes nobody asked for: a non-blocking read of the socket returns
// something other than "would block". A byte it reads is lost, but such a
// connection is not used again. It costs one system call.
func (c *h1Conn) peerGone() bool {
	if c.rawConn == nil {
		return false
	}
	if err := c.rawConn.Control(c.peek); err != nil {
		return true
	}
	return c.peekErr != syscall.EAGAIN
}
