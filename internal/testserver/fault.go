package testserver

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Fault is one way a server misbehaves; StartFault serves exactly one.
type Fault int

// The faults. "After the request" means after reading one request head and
// its body. Unless a fault says it closes, its connection stays open for
// the next request.
const (
	// Refuse: nothing listens; connections are refused.
	Refuse Fault = iota + 1
	// ResetAfterRequest closes with a TCP RST (SO_LINGER 0) after the request.
	ResetAfterRequest
	// CloseAfterRequest closes (FIN) after the request, answering nothing.
	CloseAfterRequest
	// AcceptNoRead accepts and never reads nor writes: a client waits for
	// its answer until its timeout.
	AcceptNoRead
	// ReadNoAnswer reads the request and never answers.
	ReadNoAnswer
	// SlowHeaders answers 200 one byte per Interval, status line and
	// headers included.
	SlowHeaders
	// Garbage answers bytes that are not HTTP, then closes.
	Garbage
	// CloseMidHeaders sends half a header block, then closes (FIN).
	CloseMidHeaders
	// CloseMidBody answers Content-Length 100, sends 10 bytes, then closes.
	CloseMidBody
	// HugeHeaders answers 200 with 1 MiB of headers.
	HugeHeaders
	// EndlessChunked answers 200 with a chunked body that never ends: a
	// 1 KiB chunk per Interval.
	EndlessChunked
	// TrickleHuge answers 200 with Content-Length 2 GiB and sends 1 KiB of
	// it per Interval.
	TrickleHuge
	// Informational sends 100 Continue and 103 Early Hints before a 200.
	Informational
	// EndlessInformational sends a 103 Early Hints per Interval, forever.
	EndlessInformational
	// SwitchingProtocols answers 101 Switching Protocols to a request that
	// asked for no upgrade, then says nothing more.
	SwitchingProtocols
	// ConnectionClose answers 200 with "Connection: close" and closes.
	ConnectionClose
	// HTTP10 answers as HTTP/1.0 without Content-Length: the body ends when
	// the server closes the connection.
	HTTP10
	// TLSSelfSigned serves HTTPS with a self-signed certificate for Host.
	TLSSelfSigned
	// TLSExpired serves HTTPS with an expired certificate for Host, signed
	// by the PKI.
	TLSExpired
	// TLSWrongHost serves HTTPS with a certificate of the PKI for another
	// name than Host ("wrong.Host").
	TLSWrongHost
	// H2GoAway serves HTTP/2 over TLS (ALPN h2, a leaf of the PKI for Host)
	// and sends GOAWAY after GoAwayAfter requests on each connection.
	H2GoAway
	// H2CGoAway is H2GoAway over cleartext, HTTP/2 by prior knowledge (h2c).
	H2CGoAway
	// BadStatus answers with a status code outside 100–599 (000, 099,
	// 600: see Variants), Content-Length 0, and keeps the connection open.
	BadStatus
	// MalformedHead answers with a head net/http and RFC 9112 reject: a
	// field line without a colon, two different Content-Length values, an
	// empty Content-Length, Transfer-Encoding gzip, two Transfer-Encoding
	// fields (see Variants).
	MalformedHead
	// MalformedChunked answers 200 with a chunked body whose framing is
	// broken: an invalid byte in a chunk size, a chunk size too large, a CR
	// inside a chunk line, a chunk line ending in a bare LF, chunk data not
	// followed by CRLF (see Variants).
	MalformedChunked
	// H2BadStatus is H2GoAway's server answering every request with a
	// :status outside 100–599 (1000, 099, 600: see Variants), no GOAWAY.
	H2BadStatus
	// H2ResetInternal is H2GoAway's server resetting every stream with
	// RST_STREAM INTERNAL_ERROR instead of answering, no GOAWAY.
	H2ResetInternal
	// NoContentBody answers 204 No Content with a body anyway, in the same
	// write as the head, and keeps the connection open. The body is
	// Leftover: a client that reads the connection again takes it for
	// the answer to its next request.
	NoContentBody
	// NotModifiedBody is NoContentBody with 304 Not Modified.
	NotModifiedBody
	// MixedALPN serves HTTPS whose server chooses h2 by ALPN on every
	// other connection (the first, the third, …), answering 200 there as
	// H2GoAway's server does but without GOAWAY, and http/1.1 on the
	// others, answering as NoContentBody: a fleet behind one address
	// whose instances do not all speak HTTP/2.
	MixedALPN
)

// lastFault is the last fault declared.
const lastFault = MixedALPN

// Leftover is the body NoContentBody, NotModifiedBody and MixedALPN send
// where there must be none: a whole response, status 299, that a client
// reading it as the next answer reports.
const Leftover = "HTTP/1.1 299 Leftover\r\nContent-Length: 0\r\n\r\n"

var faultNames = map[Fault]string{
	Refuse: "refuse", ResetAfterRequest: "reset-after-request", CloseAfterRequest: "close-after-request",
	AcceptNoRead: "accept-no-read",
	ReadNoAnswer: "read-no-answer", SlowHeaders: "slow-headers", Garbage: "garbage",
	CloseMidHeaders: "close-mid-headers", CloseMidBody: "close-mid-body", HugeHeaders: "huge-headers",
	EndlessChunked: "endless-chunked", TrickleHuge: "trickle-huge", Informational: "informational",
	EndlessInformational: "endless-informational", SwitchingProtocols: "switching-protocols",
	ConnectionClose: "connection-close", HTTP10: "http10", TLSSelfSigned: "tls-self-signed",
	TLSExpired: "tls-expired", TLSWrongHost: "tls-wrong-host", H2GoAway: "h2-goaway", H2CGoAway: "h2c-goaway",
	BadStatus: "bad-status", MalformedHead: "malformed-head", MalformedChunked: "malformed-chunked",
	H2BadStatus: "h2-bad-status", H2ResetInternal: "h2-reset-internal",
	NoContentBody: "no-content-body", NotModifiedBody: "not-modified-body", MixedALPN: "mixed-alpn",
}

// variant is one way a fault with several misbehaves: its name, and what
// the server sends (a whole HTTP/1.1 response, or an HTTP/2 :status).
type variant struct{ name, answer string }

// variants are the ways of the faults that have several.
var variants = map[Fault][]variant{
	BadStatus: {
		{"status 000", "HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n"},
		{"status 099", "HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n"},
		{"status 600", "HTTP/1.1 600 High\r\nContent-Length: 0\r\n\r\n"},
	},
	MalformedHead: {
		{"field line without a colon", "HTTP/1.1 200 OK\r\nX-A: a\r\nno colon here\r\nContent-Length: 3\r\n\r\nok\n"},
		{"two Content-Length values", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nok\n"},
		{"empty Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nok\n"},
		{"Transfer-Encoding gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok\n"},
		{"two Transfer-Encoding fields", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nok\n\r\n0\r\n\r\n"},
	},
	MalformedChunked: {
		{"invalid byte in a chunk size", chunkedHead + "3x\r\nok\n\r\n0\r\n\r\n"},
		{"chunk size too large", chunkedHead + "fffffffffffffffff\r\nok\n\r\n0\r\n\r\n"},
		{"CR inside a chunk line", chunkedHead + "3\r\r\nok\n\r\n0\r\n\r\n"},
		{"chunk line ending in a bare LF", chunkedHead + "3\nok\n\r\n0\r\n\r\n"},
		{"chunk data not followed by CRLF", chunkedHead + "3\r\nok\nXX0\r\n\r\n"},
	},
	H2BadStatus: {{":status 1000", "1000"}, {":status 099", "099"}, {":status 600", "600"}},
}

const chunkedHead = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"

// Variants names the ways f misbehaves, in order: FaultOptions.Variant
// picks one of them by its number, from 1. nil for a fault with one way.
func Variants(f Fault) []string {
	var names []string
	for _, v := range variants[f] {
		names = append(names, v.name)
	}
	return names
}

// String is the fault's name, as in "slow-headers".
func (f Fault) String() string {
	if s, ok := faultNames[f]; ok {
		return s
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Faults lists every fault, in the order declared.
func Faults() []Fault {
	out := make([]Fault, 0, len(faultNames))
	for f := Refuse; f <= lastFault; f++ {
		out = append(out, f)
	}
	return out
}

// FaultOptions configure StartFault.
type FaultOptions struct {
	// Addr is the address to listen on; Lo4a when invalid (zero).
	Addr netip.Addr
	// Interval paces the slow and endless writers; 50ms when 0.
	Interval time.Duration
	// Host is the name the TLS certificates are for; DefaultHost when "".
	Host string
	// PKI signs the certificates of TLSExpired, TLSWrongHost and H2GoAway;
	// a new one when nil (see FaultServer.PKI).
	PKI *PKI
	// GoAwayAfter is the number of requests an HTTP/2 connection answers
	// before its GOAWAY; 1 when 0.
	GoAwayAfter int
	// Variant picks one of the fault's Variants, from 1, for every
	// answer; 0 takes them in turn, one answer each.
	Variant int
}

// writeTimeout bounds every write of a fault server, so a client that stops
// reading cannot block a writer for long.
const writeTimeout = 5 * time.Second

// FaultServer is a server on one loopback listener that misbehaves as its
// Fault says, counting the connections it accepted and the request heads it
// read. Every connection is closed, and every goroutine returns, when the
// test ends.
type FaultServer struct {
	fault    Fault
	addr     netip.AddrPort
	host     string
	interval time.Duration
	pki      *PKI
	tlsCfg   *tls.Config
	goAway   int
	variant  int

	raw *RawServer // nil for Refuse

	heads   atomic.Int64
	goAways atomic.Int64
	answers atomic.Int64 // answers of a fault with variants
	hellos  atomic.Int64 // TLS handshakes begun (MixedALPN)
}

// StartFault starts a server with fault on a free port of o.Addr.
func StartFault(t testing.TB, fault Fault, o FaultOptions) *FaultServer {
	t.Helper()
	if !o.Addr.IsValid() {
		o.Addr = Lo4a
	}
	if o.Interval <= 0 {
		o.Interval = 50 * time.Millisecond
	}
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.GoAwayAfter <= 0 {
		o.GoAwayAfter = 1
	}
	if o.Variant < 0 || o.Variant > len(variants[fault]) {
		t.Fatalf("testserver: fault %s has no variant %d", fault, o.Variant)
	}
	s := &FaultServer{fault: fault, host: o.Host, interval: o.Interval, pki: o.PKI, goAway: o.GoAwayAfter, variant: o.Variant}
	if s.pki == nil && (fault == TLSExpired || fault == TLSWrongHost || fault.h2TLS() || fault == MixedALPN) {
		s.pki = NewPKI(t)
	}
	switch fault {
	case TLSSelfSigned:
		s.tlsCfg = &tls.Config{Certificates: []tls.Certificate{SelfSigned(t, o.Host)}}
	case TLSExpired:
		s.tlsCfg = &tls.Config{Certificates: []tls.Certificate{s.pki.Expired(o.Host)}}
	case TLSWrongHost:
		s.tlsCfg = &tls.Config{Certificates: []tls.Certificate{s.pki.Leaf("wrong." + o.Host)}}
	case H2GoAway, H2BadStatus, H2ResetInternal:
		s.tlsCfg = &tls.Config{Certificates: []tls.Certificate{s.pki.Leaf(o.Host)}, NextProtos: []string{"h2"}}
	case MixedALPN:
		leaf := s.pki.Leaf(o.Host)
		s.tlsCfg = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			proto := "h2"
			if s.hellos.Add(1)%2 == 0 {
				proto = "http/1.1"
			}
			return &tls.Config{Certificates: []tls.Certificate{leaf}, NextProtos: []string{proto}}, nil
		}}
	}
	if fault == Refuse {
		s.addr = ClosedAddrPort(t, o.Addr)
		return s
	}
	if _, ok := faultNames[fault]; !ok {
		t.Fatalf("testserver: unknown fault %d", int(fault))
	}
	s.raw = listenRaw(t, o.Addr)
	s.addr = s.raw.Addr()
	s.raw.start(s.serve)
	return s
}

// h2TLS reports whether f serves HTTP/2 over TLS.
func (f Fault) h2TLS() bool { return f == H2GoAway || f == H2BadStatus || f == H2ResetInternal }

// Fault is the server's fault.
func (s *FaultServer) Fault() Fault { return s.fault }

// nextVariant is the variant of the server's next answer.
func (s *FaultServer) nextVariant() variant {
	vs := variants[s.fault]
	if s.variant > 0 {
		return vs[s.variant-1]
	}
	return vs[(s.answers.Add(1)-1)%int64(len(vs))]
}

// Addr is the server's address and port.
func (s *FaultServer) Addr() netip.AddrPort { return s.addr }

// Port is the server's port.
func (s *FaultServer) Port() uint16 { return s.addr.Port() }

// URL is "http://HOST:PORT/", https for the TLS faults and the HTTP/2
// faults over TLS. Only a client that pins Addr reaches it.
func (s *FaultServer) URL() string {
	scheme := "http"
	if s.tlsCfg != nil {
		scheme = "https"
	}
	return scheme + "://" + hostPort(s.host, s.addr.Port()) + "/"
}

// PKI is the authority that signed the server's certificates: the one of
// FaultOptions, or one made for TLSExpired, TLSWrongHost and the HTTP/2
// faults over TLS; nil otherwise.
func (s *FaultServer) PKI() *PKI { return s.pki }

// Conns is the number of TCP connections accepted.
func (s *FaultServer) Conns() int64 {
	if s.raw == nil {
		return 0
	}
	return s.raw.Conns()
}

// Heads is the number of request heads read (HTTP/2: requests' HEADERS).
func (s *FaultServer) Heads() int64 { return s.heads.Load() }

// GoAways is the number of GOAWAY frames sent (H2GoAway, H2CGoAway).
func (s *FaultServer) GoAways() int64 { return s.goAways.Load() }

// faultConn is one accepted connection of a FaultServer.
type faultConn struct {
	net.Conn
	br *bufio.Reader
	s  *FaultServer
}

// readRequest reads one request head and up to 1 MiB of its body.
func (c *faultConn) readRequest() bool {
	req, err := http.ReadRequest(c.br)
	if err != nil {
		return false
	}
	c.s.heads.Add(1)
	io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
	req.Body.Close()
	return true
}

// write writes p within writeTimeout.
func (c *faultConn) write(p string) bool {
	c.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := io.WriteString(c, p)
	return err == nil
}

// wait waits d, returning false when the server stops first.
func (c *faultConn) wait(d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-c.s.raw.Done():
		return false
	}
}

// drain reads and discards until the client closes or the server stops.
func (c *faultConn) drain() { io.Copy(io.Discard, c.br) }

const okResponse = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n"

func (s *FaultServer) serve(raw net.Conn) {
	c := &faultConn{Conn: raw, br: bufio.NewReader(raw), s: s}
	if s.tlsCfg != nil {
		tc := tls.Server(raw, s.tlsCfg)
		tc.SetDeadline(time.Now().Add(writeTimeout))
		if err := tc.Handshake(); err != nil {
			return
		}
		tc.SetDeadline(time.Time{})
		c = &faultConn{Conn: tc, br: bufio.NewReader(tc), s: s}
	}
	switch s.fault {
	case AcceptNoRead:
		<-s.raw.Done()
		return
	case H2GoAway, H2CGoAway, H2BadStatus, H2ResetInternal:
		s.serveH2(c)
		return
	case MixedALPN:
		if c.Conn.(*tls.Conn).ConnectionState().NegotiatedProtocol == "h2" {
			s.serveH2(c)
			return
		}
	}
	for c.readRequest() {
		if !s.answer(c) {
			return
		}
	}
}

// answer misbehaves once after a request, returning whether the connection
// stays open for the next one.
func (s *FaultServer) answer(c *faultConn) bool {
	switch s.fault {
	case ResetAfterRequest:
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		return false
	case CloseAfterRequest:
		return false
	case ReadNoAnswer, SwitchingProtocols:
		if s.fault == SwitchingProtocols && !c.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: pinprobe-test\r\n\r\n") {
			return false
		}
		c.drain()
		return false
	case SlowHeaders:
		for i := range len(okResponse) {
			if !c.wait(s.interval) || !c.write(okResponse[i:i+1]) {
				return false
			}
		}
		return true
	case Garbage:
		c.write("SSH-2.0-OpenSSH_9.6\r\n\x00\x01\x02\xff\xfe garbage, not HTTP\r\n\r\n")
		return false
	case CloseMidHeaders:
		c.write("HTTP/1.1 200 OK\r\nContent-Type: text/pl")
		return false
	case CloseMidBody:
		c.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nonly ten b")
		return false
	case HugeHeaders:
		return c.write(hugeResponse())
	case EndlessChunked, TrickleHuge:
		head := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
		piece := fmt.Sprintf("400\r\n%s\r\n", strings.Repeat("x", 1024))
		if s.fault == TrickleHuge {
			head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 2147483648\r\n\r\n"
			piece = strings.Repeat("x", 1024)
		}
		if !c.write(head) {
			return false
		}
		for c.write(piece) && c.wait(s.interval) {
		}
		return false
	case Informational:
		return c.write("HTTP/1.1 100 Continue\r\n\r\n" +
			"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n" + okResponse)
	case EndlessInformational:
		for c.write("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n") && c.wait(s.interval) {
		}
		return false
	case ConnectionClose:
		c.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 3\r\n\r\nok\n")
		return false
	case HTTP10:
		c.write("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nread to close\n")
		return false
	case NoContentBody, MixedALPN:
		return c.write("HTTP/1.1 204 No Content\r\nContent-Length: " + strconv.Itoa(len(Leftover)) + "\r\n\r\n" + Leftover)
	case NotModifiedBody:
		return c.write("HTTP/1.1 304 Not Modified\r\nContent-Length: " + strconv.Itoa(len(Leftover)) + "\r\n\r\n" + Leftover)
	case BadStatus, MalformedHead, MalformedChunked:
		// The connection stays open: a client that used it again would
		// read what follows as its next answer, and the server would count
		// the request.
		return c.write(s.nextVariant().answer)
	default: // the TLS faults answer a client that accepts the certificate
		return c.write(okResponse)
	}
}

// hugeResponse is hugeHeaders, built once: building it costs more than
// sending it, under the race detector by far.
var hugeResponse = sync.OnceValue(hugeHeaders)

// hugeHeaders is a 200 whose header block is 1 MiB.
func hugeHeaders() string {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n")
	start := b.Len()
	line := strings.Repeat("h", 1000)
	for i := 0; b.Len()-start < 1<<20; i++ {
		fmt.Fprintf(&b, "X-Filler-%04d: %s\r\n", i, line)
	}
	b.WriteString("\r\nok\n")
	return b.String()
}
