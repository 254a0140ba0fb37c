package probe

import (
	"net"
	"syscall"
)

// answerAndClose writes resp to c and closes it, the answer held back
// (TCP_CORK) until the close sends it with the FIN: a client that reads
// the answer has the close behind it, however late this goroutine runs.
func answerAndClose(c net.Conn, resp string) error {
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, 1) })
		}
	}
	_, err := c.Write([]byte(resp))
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}
