package probe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// readRequest reads one HTTP request, body included, from c.
func readRequest(c net.Conn) bool {
	_, _, err := readRaw(c)
	return err == nil
}

// readRaw reads one request from c and returns its bytes as received.
func readRaw(c net.Conn) ([]byte, *http.Request, error) {
	var raw bytes.Buffer
	req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(c, &raw)))
	if err != nil {
		return nil, nil, err
	}
	io.Copy(io.Discard, req.Body)
	return raw.Bytes(), req, nil
}

// TestClassifyRealErrors provokes each failure for real on loopback and
// checks the class Attack reports for it.
func TestClassifyRealErrors(t *testing.T) {
	t.Parallel()
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
				return hostURL("https", testserver.SilentListener(t, testserver.Lo4a).Port())
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
					<-r.Context().Done() // until pinprobe gives up and closes the connection, or the test ends
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
		// By type, whatever the text says.
		{"textproto", fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", textproto.ProtocolError("no colon")), ClassProtocol},
		{"fast path", fmt.Errorf("read response from 127.0.0.1:80: %w", protoErr("status line %q", "SSH-2.0")), ClassProtocol},
		// net/http's own words, where it has no type.
		{"multiple content length", errors.New(`net/http: HTTP/1.x transport connection broken: http: message cannot contain multiple Content-Length headers; got ["2" "3"]`), ClassProtocol},
		{"empty content length", errors.New(`net/http: HTTP/1.x transport connection broken: invalid empty Content-Length ""`), ClassProtocol},
		{"unsupported transfer encoding", errors.New(`net/http: HTTP/1.x transport connection broken: unsupported transfer encoding: "gzip"`), ClassProtocol},
		{"too many transfer encodings", errors.New(`net/http: HTTP/1.x transport connection broken: too many transfer encodings: ["chunked" "chunked"]`), ClassProtocol},
		{"chunk length byte", errors.New("invalid byte in chunk length"), ClassProtocol},
		{"chunk length large", errors.New("http chunk length too large"), ClassProtocol},
		{"chunk line CR", errors.New("invalid CR in chunked line"), ClassProtocol},
		{"chunk line LF", errors.New("chunked line ends with bare LF"), ClassProtocol},
		{"chunked", errors.New("malformed chunked encoding"), ClassProtocol},
		{"other", errors.New("something else"), ClassOther},
		{"canceled", context.Canceled, ClassOther},
	}
	for _, tt := range tests {
		if got := Classify(tt.err); got != tt.want {
			t.Errorf("Classify(%s: %v) = %q; want %q", tt.name, tt.err, got, tt.want)
		}
	}
}
