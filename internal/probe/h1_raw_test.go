package probe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// scriptServer is a TCP server on loopback for what net/http servers will not
// do: it reads each request with net/http's parser and answers with a script.
type scriptServer struct {
	*testserver.RawServer
	reqs atomic.Int64 // requests read
}

// rawScript answers the n-th (1-based) request of a connection and returns
// whether to read another request from it; the server closes the connection
// once it returns false. It must end when the connection is closed or
// the server's Done is.
type rawScript func(s *scriptServer, c net.Conn, br *bufio.Reader, req *http.Request, n int) bool

// newScriptServer starts a script server on 127.0.0.1; rcvBuf > 0 fixes the
// receive buffer of its connections (SO_RCVBUF, which also stops the
// kernel's autotuning), so a client that writes more than the buffers hold
// blocks while the server does not read.
func newScriptServer(t *testing.T, script rawScript, rcvBuf int) *scriptServer {
	t.Helper()
	var lc net.ListenConfig
	if rcvBuf > 0 {
		lc.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvBuf)
			})
			return errors.Join(err, serr)
		}
	}
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptServer{}
	s.RawServer = testserver.ServeRaw(t, ln, func(c net.Conn) {
		br := bufio.NewReader(c)
		for n := 1; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			s.reqs.Add(1)
			if !script(s, c, br, req, n) {
				return
			}
			io.Copy(io.Discard, req.Body)
		}
	})
	return s
}

// reply writes a canned response and keeps the connection.
func reply(resp string) rawScript {
	return func(_ *scriptServer, c net.Conn, _ *bufio.Reader, _ *http.Request, _ int) bool {
		c.Write([]byte(resp))
		return true
	}
}

// replyClose writes a canned response and closes the connection.
func replyClose(resp string) rawScript {
	return func(_ *scriptServer, c net.Conn, _ *bufio.Reader, _ *http.Request, _ int) bool {
		c.Write([]byte(resp))
		return false
	}
}

// replyHold writes a canned response and then reads and discards until the
// client closes the connection, which proves the client does.
func replyHold(resp string) rawScript {
	return func(_ *scriptServer, c net.Conn, br *bufio.Reader, _ *http.Request, _ int) bool {
		c.Write([]byte(resp))
		io.Copy(io.Discard, br)
		return false
	}
}

// trickle writes head, then chunk every period until the connection fails.
func trickleScript(head, chunk string, period time.Duration) rawScript {
	return func(s *scriptServer, c net.Conn, _ *bufio.Reader, _ *http.Request, _ int) bool {
		if _, err := c.Write([]byte(head)); err != nil {
			return false
		}
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-s.Done():
				return false
			case <-tick.C:
			}
			c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write([]byte(chunk)); err != nil {
				return false
			}
		}
	}
}

// TestH1AgainstRawServers covers what real servers send beyond net/http's
// habits: HTTP/1.0, informational responses, protocol switches, garbage,
// connections that end early, huge and slow heads and bodies, framing
// errors, early responses. Each case checks every request's outcome, that it
// ended within its deadline, and that the server read exactly one request
// per round trip.
func TestH1AgainstRawServers(t *testing.T) {
	t.Parallel()
	type want struct {
		status   int
		bytes    int64 // -1: not checked
		body     string
		class    ErrorClass
		alt      ErrorClass // another acceptable class, when the kernel may report either
		reusable bool
		server   string
	}
	okCL := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	okWant := want{status: 200, bytes: 2, body: "ok", reusable: true}
	hugeHead := func(size, fieldLen int) string {
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\n")
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, "X-F%d: %s\r\n", i, strings.Repeat("v", fieldLen))
		}
		b.WriteString("Content-Length: 2\r\n\r\nok")
		return b.String()
	}
	tests := []struct {
		name       string
		method     string
		body       []byte
		script     rawScript
		timeout    time.Duration // per request; 3 s when 0
		want       []want
		serverReqs int // when not len(want)
		quick      bool
		rcvBuf     int
		conns      int // connections the server accepted; 0: not checked
	}{
		{
			name:   "HTTP/1.0 body read to close",
			script: replyClose("HTTP/1.0 200 OK\r\nServer: old/1\r\n\r\nhello, world"),
			want:   []want{{status: 200, bytes: 12, body: "hello, world", server: "old/1"}, {status: 200, bytes: 12, body: "hello, world", server: "old/1"}},
			conns:  2,
		},
		{
			name:   "HTTP/1.1 body read to close",
			script: replyClose("HTTP/1.1 200 OK\r\n\r\nuntil close"),
			want:   []want{{status: 200, bytes: 11, body: "until close"}},
		},
		{
			name:   "HTTP/1.0 keep-alive",
			script: reply("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok"),
			want:   []want{okWant, okWant, okWant},
			conns:  1,
		},
		{
			name:   "HTTP/1.0 with Content-Length is not kept",
			script: replyHold("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"),
			want:   []want{{status: 200, bytes: 2, body: "ok"}, {status: 200, bytes: 2, body: "ok"}},
			conns:  2,
		},
		{
			name:   "Connection: close with Content-Length",
			script: replyHold("HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nok"),
			want:   []want{{status: 200, bytes: 2, body: "ok"}, {status: 200, bytes: 2, body: "ok"}},
			conns:  2,
		},
		{
			name:   "bare LF line ends and no reason phrase",
			script: reply("HTTP/1.1 200\nContent-Length: 2\n\nok"),
			want:   []want{okWant, okWant},
		},
		{
			name:   "identical duplicate Content-Length",
			script: reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok"),
			want:   []want{okWant, okWant},
		},
		{
			name:   "informational responses are skipped",
			script: reply("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + okCL),
			want:   []want{okWant, okWant},
			conns:  1,
		},
		{
			name:   "304 and HEAD-like framing: Content-Length without a body",
			script: reply("HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n"),
			want:   []want{{status: 304, bytes: 0, reusable: true}, {status: 304, bytes: 0, reusable: true}},
			conns:  1,
		},
		{
			name:   "HEAD with Transfer-Encoding: chunked",
			method: "HEAD",
			script: reply("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
			want:   []want{{status: 200, bytes: 0, reusable: true}, {status: 200, bytes: 0, reusable: true}},
		},
		{
			name:   "chunk extensions and trailers",
			script: reply("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n5;a=b ; c=\"x\\\"y\"\r\nhello\r\n6 \r\n world\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n"),
			want:   []want{{status: 200, bytes: 11, body: "hello world", reusable: true}, {status: 200, bytes: 11, body: "hello world", reusable: true}},
			conns:  1,
		},
		{
			name:   "unsolicited bytes after the response",
			script: replyHold(okCL + "HTTP/1.1 200 OK\r\n"),
			want:   []want{{status: 200, bytes: 2, body: "ok"}},
		},
		{
			name: "headers byte by byte",
			script: func(_ *scriptServer, c net.Conn, _ *bufio.Reader, _ *http.Request, _ int) bool {
				for _, b := range []byte("HTTP/1.1 200 OK\r\nServer: slow\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n") {
					if _, err := c.Write([]byte{b}); err != nil {
						return false
					}
				}
				return true
			},
			want:  []want{{status: 200, bytes: 2, body: "ok", reusable: true, server: "slow"}, {status: 200, bytes: 2, body: "ok", reusable: true, server: "slow"}},
			conns: 1,
		},
		{
			name:   "head of 900 KiB is under the limit",
			script: reply(hugeHead(900<<10, 2000)),
			want:   []want{okWant, okWant},
			conns:  1,
		},
		{
			name:   "head over 1 MiB",
			script: replyHold(hugeHead(2<<20, 4000)),
			want:   []want{{class: ClassProtocol, bytes: 0}},
			quick:  true,
		},
		{
			// A head is bounded by its bytes only, as net/http bounds it.
			name:   "2,000 header fields",
			script: reply(hugeHead(20000, 1)),
			want:   []want{okWant, okWant},
			conns:  1,
		},
		{
			name:   "101 Switching Protocols",
			script: replyHold("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
			want:   []want{{status: 101, class: ClassProtocol}, {status: 101, class: ClassProtocol}},
			quick:  true,
		},
		{
			name:   "endless informational responses",
			script: trickleScript("", "HTTP/1.1 100 Continue\r\n\r\n", time.Millisecond),
			want:   []want{{class: ClassProtocol}},
			quick:  true,
		},
		{
			name:   "garbage instead of HTTP",
			script: replyHold("SSH-2.0-OpenSSH_9.6\r\n"),
			want:   []want{{class: ClassProtocol}},
			quick:  true,
		},
		{
			name:   "binary garbage without a line end",
			script: replyHold("\x15\x03\x01\x00\x02\x02\x0a"),
			want:   []want{{class: ClassProtocol}},
			quick:  true,
		},
		{name: "HTTP/2 status line", script: replyHold("HTTP/2 200\r\n\r\n"), want: []want{{class: ClassProtocol}}, quick: true},
		{name: "two-digit status", script: replyHold("HTTP/1.1 20 OK\r\n\r\n"), want: []want{{class: ClassProtocol}}, quick: true},
		{name: "control byte in reason", script: replyHold("HTTP/1.1 200 O\x01K\r\nContent-Length: 0\r\n\r\n"), want: []want{{class: ClassProtocol}}, quick: true},
		{
			name:   "conflicting Content-Length",
			script: replyHold("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok"),
			want:   []want{{class: ClassProtocol}}, quick: true,
		},
		{name: "Content-Length list", script: replyHold("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok"), want: []want{{class: ClassProtocol}}, quick: true},
		{name: "signed Content-Length", script: replyHold("HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok"), want: []want{{class: ClassProtocol}}, quick: true},
		{
			name:   "Content-Length and chunked",
			script: replyHold("HTTP/1.1 200 OK\r\nContent-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"),
			want:   []want{{class: ClassProtocol}}, quick: true,
		},
		{
			name:   "Transfer-Encoding gzip, chunked",
			script: replyHold("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"),
			want:   []want{{class: ClassProtocol}}, quick: true,
		},
		{
			name:   "Transfer-Encoding in HTTP/1.0",
			script: replyHold("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"),
			want:   []want{{class: ClassProtocol}}, quick: true,
		},
		{
			// RFC 9112 §5.2: a user agent replaces each obs-fold with
			// spaces, as net/http does; in a trailer too.
			name:   "obsolete line folding",
			script: reply("HTTP/1.1 200 OK\r\nServer: gw\r\n  1\r\nX-A: a\r\n b \r\n\tc\r\nContent-Length:\r\n 2\r\n\r\nok"),
			want:   []want{{status: 200, bytes: 2, body: "ok", reusable: true, server: "gw 1"}, {status: 200, bytes: 2, body: "ok", reusable: true, server: "gw 1"}},
			conns:  1,
		},
		{
			name:   "obsolete line folding in a trailer",
			script: reply("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Sum: 1\r\n 2\r\n\r\n"),
			want:   []want{okWant, okWant},
			conns:  1,
		},
		{name: "obsolete line folding after the status line", script: replyHold("HTTP/1.1 200 OK\r\n X-A: a\r\nContent-Length: 0\r\n\r\n"), want: []want{{class: ClassProtocol}}, quick: true},
		{name: "control byte in a folded value", script: replyHold("HTTP/1.1 200 OK\r\nX-A: a\r\n b\x01\r\nContent-Length: 0\r\n\r\n"), want: []want{{class: ClassProtocol}}, quick: true},
		{
			name:   "Content-Length with 30 leading zeros",
			script: reply("HTTP/1.1 200 OK\r\nContent-Length: " + strings.Repeat("0", 30) + "2\r\n\r\nok"),
			want:   []want{okWant, okWant},
			conns:  1,
		},
		{name: "Content-Length past 2^63-1", script: replyHold("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775808\r\n\r\nok"), want: []want{{class: ClassProtocol}}, quick: true},
		{name: "space before the colon", script: replyHold("HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok"), want: []want{{class: ClassProtocol}}, quick: true},
		{name: "bare CR in a value", script: replyHold("HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 0\r\n\r\n"), want: []want{{class: ClassProtocol}}, quick: true},
		{
			name:   "bad chunk size",
			script: replyHold("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
			want:   []want{{status: 200, bytes: 0, class: ClassProtocol}}, quick: true,
		},
		{
			name:   "chunk data without CRLF",
			script: replyHold("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n"),
			want:   []want{{status: 200, bytes: 2, class: ClassProtocol}}, quick: true,
		},
		{
			name:   "chunk line with a bare LF",
			script: replyHold("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n"),
			want:   []want{{status: 200, bytes: 0, class: ClassProtocol}}, quick: true,
		},
		{
			name:   "bad chunk extension",
			script: replyHold("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;=x\r\nok\r\n0\r\n\r\n"),
			want:   []want{{status: 200, bytes: 0, class: ClassProtocol}}, quick: true,
		},
		{name: "closed before answering", script: replyClose(""), want: []want{{class: ClassEOF}}, quick: true},
		{name: "closed mid-head", script: replyClose("HTTP/1.1 200 OK\r\nContent-Le"), want: []want{{class: ClassEOF}}, quick: true},
		{
			name:   "closed mid-body",
			script: replyClose("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789"),
			want:   []want{{status: 200, bytes: 10, body: "0123456789", class: ClassEOF}}, quick: true,
		},
		{
			name:   "closed mid-chunk",
			script: replyClose("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"),
			want:   []want{{status: 200, bytes: 3, body: "hel", class: ClassEOF}}, quick: true,
		},
		{
			name: "reset mid-body",
			script: func(_ *scriptServer, c net.Conn, _ *bufio.Reader, _ *http.Request, _ int) bool {
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789"))
				c.(*net.TCPConn).SetLinger(0)
				return false
			},
			want:  []want{{status: -1, bytes: -1, class: ClassReset}},
			quick: true,
		},
		{
			name: "kept-alive connection closed by the server: not retried",
			script: func(_ *scriptServer, c net.Conn, _ *bufio.Reader, _ *http.Request, _ int) bool {
				c.Write([]byte(okCL))
				return false
			},
			want:       []want{okWant, {class: ClassEOF, alt: ClassReset}, okWant},
			serverReqs: 2,
			quick:      true,
		},
		{
			name: "kept-alive connection reset by the server: not retried",
			script: func(_ *scriptServer, c net.Conn, _ *bufio.Reader, _ *http.Request, n int) bool {
				if n == 1 {
					c.Write([]byte(okCL))
					return true
				}
				c.(*net.TCPConn).SetLinger(0)
				return false
			},
			want:  []want{okWant, {class: ClassReset}, okWant},
			quick: true,
		},
		{
			name: "silent server",
			script: func(s *scriptServer, c net.Conn, br *bufio.Reader, _ *http.Request, _ int) bool {
				io.Copy(io.Discard, br)
				return false
			},
			timeout: 300 * time.Millisecond,
			want:    []want{{class: ClassTimeout}},
		},
		{
			name:    "2 GB Content-Length trickled",
			script:  trickleScript("HTTP/1.1 200 OK\r\nContent-Length: 2147483648\r\n\r\n", strings.Repeat("x", 1024), 20*time.Millisecond),
			timeout: 500 * time.Millisecond,
			want:    []want{{status: 200, bytes: -1, class: ClassTimeout}},
		},
		{
			name:    "endless chunked body",
			script:  trickleScript("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "400\r\n"+strings.Repeat("y", 1024)+"\r\n", 2*time.Millisecond),
			timeout: 500 * time.Millisecond,
			want:    []want{{status: 200, bytes: -1, class: ClassTimeout}},
		},
		{
			// The kernel buffers on both sides hold a few MiB (client send
			// buffer up to tcp_wmem's 4 MiB here), so a body that fits would
			// be written whole and prove nothing: 16 MiB does not fit.
			name:   "early response before a 16 MiB request body is read",
			method: "POST",
			body:   bytes.Repeat([]byte("b"), 16<<20),
			rcvBuf: 64 << 10,
			script: func(s *scriptServer, c net.Conn, _ *bufio.Reader, _ *http.Request, _ int) bool {
				c.Write([]byte("HTTP/1.1 413 Content Too Large\r\nContent-Length: 9\r\n\r\ntoo large"))
				<-s.Done() // neither reads nor closes
				return false
			},
			want:  []want{{status: 413, bytes: 9, body: "too large"}, {status: 413, bytes: 9, body: "too large"}},
			quick: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScriptServer(t, tc.script, tc.rcvBuf)
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 3 * time.Second
			}
			method := tc.method
			if method == "" {
				method = "GET"
			}
			tmpl, d := h1Target(t, hostURL("http", s.Port()), s.Addr().Addr(), method, tc.body, ConnOptions{Timeout: 5 * time.Second}, nil)
			recs := h1Run(t, d, tmpl, len(tc.want), 0, timeout, newH1Response(BodyPrefix))
			for i, w := range tc.want {
				r := recs[i]
				if (w.status >= 0 && r.status != w.status) || (w.bytes >= 0 && r.bytes != w.bytes) ||
					(r.class != w.class && (w.alt == "" || r.class != w.alt)) || r.reusable != w.reusable || r.server != w.server {
					t.Errorf("request %d: got status %d, %d bytes, class %q, reusable %v, server %q (err %v); want %d, %d, %q, %v, %q",
						i+1, r.status, r.bytes, r.class, r.reusable, r.server, r.err, w.status, w.bytes, w.class, w.reusable, w.server)
				}
				if w.body != "" && r.body != w.body {
					t.Errorf("request %d: got body prefix %s; want %s", i+1, clip([]byte(r.body)), clip([]byte(w.body)))
				}
				if w.class == ClassTimeout && r.elapsed < timeout {
					t.Errorf("request %d: timed out after %v; want at least the timeout %v", i+1, r.elapsed, timeout)
				}
				if tc.quick && r.elapsed >= timeout {
					t.Errorf("request %d: took %v; want an answer before the timeout %v", i+1, r.elapsed, timeout)
				}
			}
			wantReqs := tc.serverReqs
			if wantReqs == 0 {
				wantReqs = len(tc.want)
			}
			if got := s.reqs.Load(); got != int64(wantReqs) {
				t.Errorf("server read %d requests; want %d", got, wantReqs)
			}
			if got := s.Conns(); tc.conns > 0 && got != int64(tc.conns) {
				t.Errorf("server accepted %d connections; want %d", got, tc.conns)
			}
		})
	}
}

// TestH1ParseChunkLine checks the chunk-size line grammar on its own.
func TestH1ParseChunkLine(t *testing.T) {
	tests := []struct {
		line string
		size int64
		ok   bool
	}{
		{"0", 0, true},
		{"1a", 26, true},
		{"FFFF", 65535, true},
		{"5 ", 5, true},
		{"5;name", 5, true},
		{"5 ; name = value ;other", 5, true},
		{`5;q="a;b\"c"`, 5, true},
		{"fffffffffffffff", 1<<60 - 1, true},
		{"", 0, false},
		{" 5", 0, false},
		{"-5", 0, false},
		{"0x5", 0, false},
		{"5 6", 0, false},
		{"5;", 0, false},
		{"5;a=", 0, false},
		{`5;a="open`, 0, false},
		{"5;a b", 0, false},
		{"ffffffffffffffff", 0, false},
	}
	for _, tc := range tests {
		size, err := parseChunkLine([]byte(tc.line))
		if (err == nil) != tc.ok || size != tc.size && tc.ok {
			t.Errorf("parseChunkLine(%q) = %d, %v; want %d, ok %v", tc.line, size, err, tc.size, tc.ok)
		}
	}
}

// TestH1ClassifiesProtocolErrors checks that a wrapped *ProtocolError is
// class protocol.
func TestH1ClassifiesProtocolErrors(t *testing.T) {
	err := fmt.Errorf("read response from 127.0.0.1:80: %w", protoErr("status line %s", clip([]byte("SSH-2.0"))))
	if got := Classify(err); got != ClassProtocol {
		t.Errorf("Classify(%v) = %q; want %q", err, got, ClassProtocol)
	}
}

// TestH1ZeroAllocs checks that a warm connection allocates nothing per
// request, with the body prefix, the Server header and captured header
// values that alternate between two instances.
func TestH1ZeroAllocs(t *testing.T) {
	ap := cannedServer(t,
		"HTTP/1.1 200 OK\r\nServer: canned\r\nX-Served-By: a\r\nContent-Length: 3\r\n\r\nok\n",
		"HTTP/1.1 502 Bad Gateway\r\nServer: canned\r\nX-Served-By: b\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbad\n\r\n0\r\n\r\n")
	tmpl, d := h1Target(t, hostURL("http", ap.Port()), ap.Addr(), "GET", nil, ConnOptions{Timeout: 5 * time.Second}, nil)
	c, err := d.dial(t.Context(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	resp := newH1Response(BodyPrefix, "X-Served-By")
	var statuses []int
	for range 4 {
		if err := c.roundTrip(tmpl, "pinprobe-0-1", false, time.Now().Add(5*time.Second), resp); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, resp.status)
	}
	if want := []int{200, 502, 200, 502}; !slices.Equal(statuses, want) {
		t.Fatalf("statuses %v; want %v", statuses, want)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := c.roundTrip(tmpl, "pinprobe-0-1", false, time.Now().Add(5*time.Second), resp); err != nil {
			t.Fatal(err)
		}
		if resp.server != "canned" || resp.values[0] == "" || len(resp.body) != 3 && len(resp.body) != 4 {
			t.Fatalf("got server %q, values %q, body %q", resp.server, resp.values, resp.body)
		}
	})
	if allocs != 0 {
		t.Errorf("roundTrip: %v allocations per request; want 0", allocs)
	}
}

// TestH1Stale checks that an idle kept-alive connection the server closed,
// reset or wrote to is found stale before a request is sent on it (so that
// a keep-alive timeout is no failure), that a live one is not, and that a
// connection reused within h1IdleCheck is not looked at.
func TestH1Stale(t *testing.T) {
	okCL := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	tests := []struct {
		name   string
		script rawScript
		gone   func(s *scriptServer) bool // the server has done its part
		want   bool
	}{
		{
			name:   "alive",
			script: reply(okCL),
			gone:   func(*scriptServer) bool { return true },
			want:   false,
		},
		{
			name:   "closed by the server",
			script: replyClose(okCL),
			gone:   func(s *scriptServer) bool { return s.Open() == 0 },
			want:   true,
		},
		{
			name: "reset by the server",
			script: func(_ *scriptServer, c net.Conn, _ *bufio.Reader, _ *http.Request, _ int) bool {
				c.Write([]byte(okCL))
				c.(*net.TCPConn).SetLinger(0)
				return false
			},
			gone: func(s *scriptServer) bool { return s.Open() == 0 },
			want: true,
		},
		{
			name: "bytes nobody asked for",
			script: func(s *scriptServer, c net.Conn, br *bufio.Reader, _ *http.Request, _ int) bool {
				c.Write([]byte(okCL))
				time.AfterFunc(20*time.Millisecond, func() { c.Write([]byte("HTTP/1.1 408 Request Timeout\r\n\r\n")) })
				io.Copy(io.Discard, br)
				return false
			},
			want: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScriptServer(t, tc.script, 0)
			tmpl, d := h1Target(t, hostURL("http", s.Port()), s.Addr().Addr(), "GET", nil, ConnOptions{Timeout: 5 * time.Second}, nil)
			c, err := d.dial(t.Context(), time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			if c.stale(time.Now().Add(time.Hour)) {
				t.Errorf("a connection that carried nothing is stale; want it used")
			}
			if err := c.roundTrip(tmpl, "", false, time.Now().Add(5*time.Second), newH1Response(0)); err != nil || !c.reusable() {
				t.Fatalf("first request: err %v, reusable %v; want nil, true", err, c.reusable())
			}
			later := func() time.Time { return c.idleSince.Add(h1IdleCheck) }
			if tc.gone != nil {
				waitFor(t, "done by the server", func() bool { return tc.gone(s) })
				if c.stale(c.idleSince) {
					t.Errorf("stale at once after the response; want no check within %v", h1IdleCheck)
				}
			}
			if tc.want {
				waitFor(t, "stale", func() bool { return c.stale(later()) })
				if c.reusable() {
					t.Errorf("stale connection still reusable; want it closed")
				}
				return
			}
			if c.stale(later()) {
				t.Fatalf("live connection found stale")
			}
			if err := c.roundTrip(tmpl, "", false, time.Now().Add(5*time.Second), newH1Response(0)); err != nil {
				t.Errorf("second request: %v", err)
			}
			if got := s.reqs.Load(); got != 2 {
				t.Errorf("server read %d requests; want 2", got)
			}
		})
	}
}
