package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"slices"
	"strings"
	"syscall"
)

// ErrorClass is the fixed set of reasons a request got no response.
type ErrorClass string

// The error classes of DESIGN.md, one per failed request without a status.
const (
	ClassNone               ErrorClass = ""
	ClassDNS                ErrorClass = "dns"
	ClassConnectRefused     ErrorClass = "connect_refused"
	ClassConnectTimeout     ErrorClass = "connect_timeout"
	ClassNetworkUnreachable ErrorClass = "network_unreachable"
	ClassTLS                ErrorClass = "tls"
	ClassReset              ErrorClass = "reset"
	ClassEOF                ErrorClass = "eof"
	ClassTimeout            ErrorClass = "timeout"
	ClassProtocol           ErrorClass = "protocol"
	// ClassClient is a failure of the machine pinprobe runs on, not of the
	// backend: out of file descriptors (EMFILE, ENFILE), of ephemeral ports
	// (EADDRNOTAVAIL on connect), or of kernel buffers or memory (ENOBUFS,
	// ENOMEM).
	ClassClient ErrorClass = "client"
	ClassOther  ErrorClass = "other"
)

// DialError marks an error that happened while opening the TCP connection, so
// a timeout there is a connect_timeout rather than a request timeout.
type DialError struct{ Err error }

func (e *DialError) Error() string { return e.Err.Error() }
func (e *DialError) Unwrap() error { return e.Err }

// Classify maps a request error to its class. It looks at types and errno
// values first; a few errors net/http only exposes as text are matched last.
func Classify(err error) ErrorClass {
	if err == nil {
		return ClassNone
	}
	if isClient(err) {
		return ClassClient
	}
	var dial *DialError
	inDial := errors.As(err, &dial)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return ClassDNS
	}
	if isProtocol(err) {
		return ClassProtocol
	}
	if isTimeout(err) {
		if inDial {
			return ClassConnectTimeout
		}
		return ClassTimeout
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassConnectRefused
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.EAFNOSUPPORT),
		errors.Is(err, syscall.ENETDOWN), errors.Is(err, syscall.EHOSTDOWN):
		return ClassNetworkUnreachable
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return ClassReset
	}
	if isTLS(err) {
		return ClassTLS
	}
	if errors.Is(err, errSwitched) {
		return ClassProtocol
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ClassEOF
	}
	if inDial {
		return ClassOther
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "server closed idle connection"):
		return ClassEOF // net/http's errServerClosedIdle: the peer closed a kept-alive connection
	case slices.ContainsFunc(protocolText, func(s string) bool { return strings.Contains(msg, s) }):
		return ClassProtocol
	case strings.Contains(msg, "tls: "):
		return ClassTLS
	}
	return ClassOther
}

// isProtocol reports whether err is a response that breaks HTTP, as the
// types say it: the fast path's *ProtocolError, a head net/http's
// textproto reader refused (a field line without a colon, folding after
// the status line), or an HTTP/2 stream error (a RST_STREAM from the
// server, or a frame net/http refused), which net/http does not export
// but lets errors.As copy into a struct of the same fields.
func isProtocol(err error) bool {
	var (
		proto  *ProtocolError
		mime   textproto.ProtocolError
		stream h2StreamError
	)
	return errors.As(err, &proto) || errors.As(err, &mime) || errors.As(err, &stream)
}

// h2StreamError has the fields of net/http's HTTP/2 stream error (as
// golang.org/x/net/http2.StreamError does), so errors.As fills it.
type h2StreamError struct {
	StreamID uint32
	Code     uint32
	Cause    error
}

func (e h2StreamError) Error() string {
	return fmt.Sprintf("stream error: stream ID %d; code %d", e.StreamID, e.Code)
}

// protocolText are the broken responses net/http reports only as text
// (fmt.Errorf, or unexported types and values), each as it says it.
var protocolText = []string{
	"malformed HTTP",       // the status line: response, status code, version
	"http2:",               // HTTP/2 framing, GOAWAY with an error
	"unexpected HTTP",      // an answer without a request
	"invalid header",       // field names and values
	"Content-Length",       // bad, invalid empty, multiple Content-Length headers
	"transfer encoding",    // unsupported transfer encoding, too many transfer encodings
	"chunk length",         // invalid byte in, too large, empty hex number for chunk length
	"chunked line",         // chunked line ends with bare LF, invalid CR in chunked line
	"chunked encoding",     // malformed chunked encoding, chunked encoding contains too much non-data
	"header line too long", // a chunk line over 4 KiB
	"too many headers",
	"response header", // server response headers exceeded MaxResponseHeaderBytes
	"trailer key",     // bad trailer key
}

// isClient reports whether err is the client machine running out of
// something. EADDRNOTAVAIL on connect means no ephemeral port was left for
// the address (pinprobe never binds a local address).
func isClient(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isTLS(err error) bool {
	var (
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		echErr  *tls.ECHRejectionError
	)
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &echErr)
}
