package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"pinprobe/internal/testserver"
)

// rawServer accepts connections on 127.0.0.1 and hands each to serve; the
// listener and every connection are closed when the test ends.
func rawServer(t *testing.T, serve func(net.Conn)) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// readRequest reads one HTTP request, body included, from c.
func readRequest(c net.Conn) bool {
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return false
	}
	io.Copy(io.Discard, req.Body)
	return true
}

// resetConn closes c with SO_LINGER 0: the kernel sends a RST, not a FIN.
func resetConn(c net.Conn) {
	c.(*net.TCPConn).SetLinger(0)
	c.Close()
}

// handlerServer serves h over HTTP/1.1 on 127.0.0.1.
func handlerServer(t *testing.T, h http.HandlerFunc) uint16 {
	t.Helper()
	port, lns := testserver.ListenSamePort(t, testserver.Lo4a)
	testserver.Serve(t, lns[0], h, nil)
	return port
}

// fullBacklog returns the port of a 127.0.0.1 socket that listens with a
// backlog of 0, never accepts, and whose accept queue is already full, so
// the kernel drops further SYNs and a connect can only time out.
func fullBacklog(t *testing.T) uint16 {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("relies on Linux dropping SYNs to a full accept queue")
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
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
	addr := netip.AddrPortFrom(testserver.Lo4a, port).String()
	// Fill the accept queue until a connect no longer completes.
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

// TestClassifyRealErrors provokes each failure for real on loopback and
// checks the class Attack reports for it.
func TestClassifyRealErrors(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tests := []struct {
		name       string
		url        func(t *testing.T) string
		timeout    time.Duration
		wantClass  ErrorClass
		wantStatus int
	}{
		{
			name:      "connection refused",
			url:       func(t *testing.T) string { return hostURL("http", testserver.ClosedPort(t, testserver.Lo4a)) },
			wantClass: ClassConnectRefused,
		},
		{
			name:      "connect timeout",
			url:       func(t *testing.T) string { return hostURL("http", testserver.FullBacklog(t)) },
			timeout:   300 * time.Millisecond,
			wantClass: ClassConnectTimeout,
		},
		{
			name: "TLS handshake stalls",
			url: func(t *testing.T) string {
				return hostURL("https", testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) { io.Copy(io.Discard, c) }).Port())
			},
			timeout:   300 * time.Millisecond,
			wantClass: ClassConnectTimeout,
		},
		{
			name: "reset after the request",
			url: func(t *testing.T) string {
				return hostURL("http", testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) {
					if readRequest(c) {
						testserver.ResetConn(c)
					}
				}).Port())
			},
			wantClass: ClassReset,
		},
		{
			name: "closed without an answer",
			url: func(t *testing.T) string {
				return hostURL("http", testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) { readRequest(c) }).Port())
			},
			wantClass: ClassEOF,
		},
		{
			name: "body cut short",
			url: func(t *testing.T) string {
				return hostURL("http", testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) {
					if readRequest(c) {
						io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
					}
				}).Port())
			},
			wantClass:  ClassEOF,
			wantStatus: http.StatusOK,
		},
		{
			name: "answer too slow",
			url: func(t *testing.T) string {
				return hostURL("http", testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					select { // until pinprobe gives up and closes the connection
					case <-r.Context().Done():
					case <-release:
					}
				}), nil, testserver.Lo4a))
			},
			timeout:   200 * time.Millisecond,
			wantClass: ClassTimeout,
		},
		{
			name: "garbage instead of HTTP",
			url: func(t *testing.T) string {
				return hostURL("http", testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) {
					if readRequest(c) {
						io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n\r\n")
					}
				}).Port())
			},
			wantClass: ClassProtocol,
		},
		{
			name: "TLS to a cleartext server",
			url: func(t *testing.T) string {
				return hostURL("https", testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), nil, testserver.Lo4a))
			},
			wantClass: ClassTLS,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eps := endpoints(t, tt.url(t), testserver.Lo4a)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			o := Options{ConnOptions: ConnOptions{Timeout: timeout}, Rate: 100, Requests: 3, Concurrency: 3}
			rs := sentOnly(attack(t, eps, o, 10*time.Second))
			if len(rs) != 3 {
				t.Fatalf("%d results; want 3", len(rs))
			}
			for _, r := range rs {
				if r.Class != tt.wantClass || r.Status != tt.wantStatus || r.Err == nil {
					t.Errorf("status %d, class %q (%v); want status %d, class %q", r.Status, r.Class, r.Err, tt.wantStatus, tt.wantClass)
				}
			}
		})
	}
}

// timeoutError is a net.Error that timed out, as a deadline on a conn reports.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func opErr(op string, errno syscall.Errno) error {
	return &url.Error{Op: "Get", URL: "http://app.test/", Err: &net.OpError{
		Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno),
	}}
}

func TestClassifySynthetic(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want ErrorClass
	}{
		{"nil", nil, ClassNone},
		{"dns", &net.DNSError{Err: "no such host", Name: "app.test", IsNotFound: true}, ClassDNS},
		{"dns timeout", &net.DNSError{Err: "i/o timeout", Name: "app.test", IsTimeout: true}, ClassDNS},
		{"refused", &DialError{Err: opErr("connect", syscall.ECONNREFUSED)}, ClassConnectRefused},
		{"dial timeout", &DialError{Err: &net.OpError{Op: "dial", Err: timeoutError{}}}, ClassConnectTimeout},
		{"dial deadline", &DialError{Err: context.DeadlineExceeded}, ClassConnectTimeout},
		{"dial ETIMEDOUT", &DialError{Err: opErr("connect", syscall.ETIMEDOUT)}, ClassConnectTimeout},
		{"network unreachable", &DialError{Err: opErr("connect", syscall.ENETUNREACH)}, ClassNetworkUnreachable},
		{"host unreachable", &DialError{Err: opErr("connect", syscall.EHOSTUNREACH)}, ClassNetworkUnreachable},
		{"ephemeral ports exhausted", &DialError{Err: opErr("connect", syscall.EADDRNOTAVAIL)}, ClassClient},
		{"out of descriptors", &DialError{Err: opErr("socket", syscall.EMFILE)}, ClassClient},
		{"system out of descriptors", &DialError{Err: opErr("socket", syscall.ENFILE)}, ClassClient},
		{"out of buffers", &DialError{Err: opErr("connect", syscall.ENOBUFS)}, ClassClient},
		{"out of memory", &DialError{Err: opErr("socket", syscall.ENOMEM)}, ClassClient},
		{"out of buffers writing", opErr("write", syscall.ENOBUFS), ClassClient},
		{"descriptors as text only", &DialError{Err: errors.New("socket: too many open files")}, ClassOther},
		{"reset", opErr("read", syscall.ECONNRESET), ClassReset},
		{"reset wrapped by net/http", fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", opErr("read", syscall.ECONNRESET)), ClassReset},
		{"aborted", opErr("read", syscall.ECONNABORTED), ClassReset},
		{"broken pipe", opErr("write", syscall.EPIPE), ClassReset},
		{"request deadline", &url.Error{Op: "Get", URL: "http://app.test/", Err: context.DeadlineExceeded}, ClassTimeout},
		{"read timeout", &net.OpError{Op: "read", Err: timeoutError{}}, ClassTimeout},
		{"eof", io.EOF, ClassEOF},
		{"unexpected eof", fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF), ClassEOF},
		{"server closed idle", errors.New("http: server closed idle connection"), ClassEOF},
		{"unknown authority", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, ClassTLS},
		{"hostname mismatch", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "app.test"}, ClassTLS},
		{"expired", x509.CertificateInvalidError{Reason: x509.Expired}, ClassTLS},
		{"alert", fmt.Errorf("remote error: %w", tls.AlertError(40)), ClassTLS},
		{"record header", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, ClassTLS},
		{"tls text", errors.New("tls: handshake failure"), ClassTLS},
		{"malformed", errors.New(`net/http: HTTP/1.x transport connection broken: malformed HTTP response "SSH-2.0"`), ClassProtocol},
		{"http2", errors.New("http2: server sent GOAWAY and closed the connection"), ClassProtocol},
		{"bad content length", errors.New(`net/http: bad Content-Length "x"`), ClassProtocol},
		{"switched protocols", fmt.Errorf("HTTP/1.1 101 Switching Protocols: %w", errSwitched), ClassProtocol},
		{"headers too large", errors.New("net/http: server response headers exceeded 10485760 bytes; aborted"), ClassProtocol},
		{"other", errors.New("something else"), ClassOther},
		{"canceled", context.Canceled, ClassOther},
	}
	for _, tt := range tests {
		if got := Classify(tt.err); got != tt.want {
			t.Errorf("Classify(%s: %v) = %q; want %q", tt.name, tt.err, got, tt.want)
		}
	}
}
