//go:build !unix

package probe

import "net"

// initIdleCheck does nothing here: peerGone cannot look at the socket.
func (c *h1Conn) initIdleCheck(net.Conn) {}

// peerGone reports false: a connection the server closed while idle shows
// as the next request's error.
func (c *h1Conn) peerGone() bool { return false }
