//go:build !linux

package probe

import "net"

// answerAndClose writes resp to c and closes it (without Linux's
// TCP_CORK the close may follow the answer a moment later).
func answerAndClose(c net.Conn, resp string) error {
	_, err := c.Write([]byte(resp))
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}
