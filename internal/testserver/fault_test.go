package testserver

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// faultClient is a pinned client to s with keep-alives, trusting s's PKI.
func faultClient(t *testing.T, s *FaultServer, timeout time.Duration) *http.Client {
	var tlsCfg *tls.Config
	if s.PKI() != nil {
		tlsCfg = s.PKI().ClientConfig("")
	} else if strings.HasPrefix(s.URL(), "https:") {
		tlsCfg = &tls.Config{} // the system's roots: the self-signed certificate fails
	}
	c := pinnedClient(t, s.Addr(), tlsCfg, true)
	c.Timeout = timeout
	return c
}

// try sends GET to s and returns the response (body unread, closed at the
// test's end) or the error.
func try(t *testing.T, c *http.Client, s *FaultServer) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}

// tryOK is try, failing the test unless a response came.
func tryOK(t *testing.T, c *http.Client, s *FaultServer) *http.Response {
	t.Helper()
	resp, err := try(t, c, s)
	if err != nil {
		t.Fatalf("GET: %v; want 200", err)
	}
	return resp
}

// rawGet dials s, sends one GET and returns the connection and a reader.
func rawGet(t *testing.T, s *FaultServer) (net.Conn, *bufio.Reader) {
	t.Helper()
	rc := dialRaw(t, s.Addr())
	if _, err := io.WriteString(rc.c, "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	return rc.c, rc.br
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestFaults exercises every fault with a plain client and checks what the
// client sees and what the server counted. Some leave their connection
// open at the end: the server's cleanup must still stop (it fails the test
// when a goroutine outlives it by 5s).
func TestFaults(t *testing.T) {
	t.Parallel()
	const iv = 2 * time.Millisecond
	// silent: a request sent, nothing comes back.
	silent := func(t *testing.T, s *FaultServer) {
		c, br := rawGet(t, s)
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := br.ReadByte(); !isTimeout(err) {
			t.Errorf("read: %v; want a timeout", err)
		}
	}
	tests := []struct {
		fault     Fault
		wantConns int64
		wantHeads int64
		check     func(t *testing.T, s *FaultServer)
	}{
		{Refuse, 0, 0, func(t *testing.T, s *FaultServer) {
			_, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("dial: %v; want connection refused", err)
			}
		}},
		{ResetAfterRequest, 1, 1, func(t *testing.T, s *FaultServer) {
			_, br := rawGet(t, s)
			if _, err := br.ReadByte(); !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("read: %v; want connection reset", err)
			}
		}},
		{CloseAfterRequest, 2, 2, func(t *testing.T, s *FaultServer) {
			_, br := rawGet(t, s)
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("read: %v; want EOF", err)
			}
			if _, err := try(t, faultClient(t, s, 5*time.Second), s); !errors.Is(err, io.EOF) {
				t.Errorf("GET: %v; want EOF", err)
			}
		}},
		{AcceptNoRead, 1, 0, silent},
		{ReadNoAnswer, 1, 1, silent},
		{SlowHeaders, 1, 2, func(t *testing.T, s *FaultServer) {
			c := faultClient(t, s, 10*time.Second)
			for range 2 {
				start := time.Now()
				resp := tryOK(t, c, s)
				body, _ := io.ReadAll(resp.Body)
				if min := time.Duration(len(okResponse)) * iv; resp.StatusCode != 200 || string(body) != "ok\n" || time.Since(start) < min {
					t.Errorf("GET: %d %q in %v; want 200 \"ok\" in at least %v", resp.StatusCode, body, time.Since(start), min)
				}
			}
		}},
		{Garbage, 1, 1, func(t *testing.T, s *FaultServer) {
			if _, err := try(t, faultClient(t, s, 5*time.Second), s); err == nil || !strings.Contains(err.Error(), "malformed HTTP") {
				t.Errorf("GET: %v; want a malformed HTTP response", err)
			}
		}},
		{CloseMidHeaders, 1, 1, func(t *testing.T, s *FaultServer) {
			if _, err := try(t, faultClient(t, s, 5*time.Second), s); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("GET: %v; want unexpected EOF", err)
			}
		}},
		{CloseMidBody, 1, 1, func(t *testing.T, s *FaultServer) {
			resp := tryOK(t, faultClient(t, s, 5*time.Second), s)
			body, err := io.ReadAll(resp.Body)
			if resp.ContentLength != 100 || string(body) != "only ten b" || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("body: %d announced, %q, %v; want 100, 10 bytes, unexpected EOF", resp.ContentLength, body, err)
			}
		}},
		{HugeHeaders, 1, 2, func(t *testing.T, s *FaultServer) {
			c := faultClient(t, s, 10*time.Second)
			for range 2 {
				resp := tryOK(t, c, s)
				io.Copy(io.Discard, resp.Body)
				size := 0
				for k, vs := range resp.Header {
					for _, v := range vs {
						size += len(k) + len(v) + 4
					}
				}
				if resp.StatusCode != 200 || size < 1<<20 {
					t.Errorf("GET: %d with %d bytes of headers; want 200 with 1 MiB", resp.StatusCode, size)
				}
			}
		}},
		{EndlessChunked, 1, 1, func(t *testing.T, s *FaultServer) {
			resp := tryOK(t, faultClient(t, s, 0), s)
			n, err := io.CopyN(io.Discard, resp.Body, 8<<10)
			if !slices.Equal(resp.TransferEncoding, []string{"chunked"}) || n != 8<<10 || err != nil {
				t.Errorf("chunked %v, read %d, %v; want 8 KiB of an endless chunked body", resp.TransferEncoding, n, err)
			}
			// The body stays open: the server must stop anyway.
		}},
		{TrickleHuge, 1, 1, func(t *testing.T, s *FaultServer) {
			resp := tryOK(t, faultClient(t, s, 0), s)
			n, err := io.CopyN(io.Discard, resp.Body, 4<<10)
			if resp.ContentLength != 2<<30 || n != 4<<10 || err != nil {
				t.Errorf("Content-Length %d, read %d, %v; want 2 GiB announced and 4 KiB read", resp.ContentLength, n, err)
			}
		}},
		{Informational, 1, 1, func(t *testing.T, s *FaultServer) {
			var got []int
			trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
				got = append(got, code)
				return nil
			}}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, s.URL(), nil)
			resp, err := faultClient(t, s, 5*time.Second).Do(req)
			if err != nil {
				t.Fatalf("GET: %v; want 200", err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || !slices.Equal(got, []int{100, 103}) {
				t.Errorf("GET: 1xx %v then %d; want [100 103] then 200", got, resp.StatusCode)
			}
		}},
		{EndlessInformational, 2, 2, func(t *testing.T, s *FaultServer) {
			c, br := rawGet(t, s)
			for i := range 5 {
				resp, err := http.ReadResponse(br, nil)
				if err != nil || resp.StatusCode != 103 {
					t.Fatalf("response %d: %v, %v; want 103", i, resp, err)
				}
			}
			c.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := try(t, faultClient(t, s, 300*time.Millisecond), s); err == nil {
				t.Errorf("GET through net/http: no error; want too many 1xx or a timeout")
			}
		}},
		{SwitchingProtocols, 1, 1, func(t *testing.T, s *FaultServer) {
			c, br := rawGet(t, s)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "pinprobe-test" {
				t.Fatalf("response: %v, %v; want 101 Switching Protocols", resp, err)
			}
			c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			if _, err := br.ReadByte(); !isTimeout(err) {
				t.Errorf("after the 101: %v; want silence", err)
			}
		}},
		{ConnectionClose, 3, 3, func(t *testing.T, s *FaultServer) {
			c := faultClient(t, s, 5*time.Second)
			for range 3 {
				resp, err := try(t, c, s)
				if err != nil || !resp.Close || resp.StatusCode != 200 {
					t.Fatalf("GET: %v, %v; want 200 with Connection: close", resp, err)
				}
				io.Copy(io.Discard, resp.Body)
			}
		}},
		{HTTP10, 1, 1, func(t *testing.T, s *FaultServer) {
			resp := tryOK(t, faultClient(t, s, 5*time.Second), s)
			body, err := io.ReadAll(resp.Body)
			if resp.Proto != "HTTP/1.0" || resp.ContentLength != -1 || string(body) != "read to close\n" || err != nil {
				t.Errorf("%s, length %d, %q, %v; want HTTP/1.0 read to close", resp.Proto, resp.ContentLength, body, err)
			}
		}},
		{TLSSelfSigned, 2, 1, func(t *testing.T, s *FaultServer) {
			checkTLSFault(t, s, func(err error) bool { var e x509.UnknownAuthorityError; return errors.As(err, &e) })
		}},
		{TLSExpired, 2, 1, func(t *testing.T, s *FaultServer) {
			checkTLSFault(t, s, func(err error) bool {
				var e x509.CertificateInvalidError
				return errors.As(err, &e) && e.Reason == x509.Expired
			})
		}},
		{TLSWrongHost, 2, 1, func(t *testing.T, s *FaultServer) {
			checkTLSFault(t, s, func(err error) bool { var e x509.HostnameError; return errors.As(err, &e) })
		}},
		{H2GoAway, 3, 6, func(t *testing.T, s *FaultServer) { checkGoAway(t, s, faultClient(t, s, 5*time.Second)) }},
		{H2CGoAway, 3, 6, func(t *testing.T, s *FaultServer) {
			c := faultClient(t, s, 5*time.Second)
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			c.Transport.(*http.Transport).Protocols = &p
			checkGoAway(t, s, c)
		}},
		{BadStatus, 1, 3, func(t *testing.T, s *FaultServer) {
			c, br := rawGet(t, s)
			for i, want := range []string{"000", "099", "600"} {
				if i > 0 {
					io.WriteString(c, "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
				}
				line, err := br.ReadString('\n')
				if _, code, _ := strings.Cut(line, " "); err != nil || !strings.HasPrefix(code, want+" ") {
					t.Errorf("answer %d: %q, %v; want status %s", i, line, err, want)
				}
				br.ReadString('\n') // Content-Length: 0
				br.ReadString('\n') // the empty line
			}
		}},
		{MalformedHead, 5, 5, func(t *testing.T, s *FaultServer) {
			for i, want := range []string{"malformed MIME header", "multiple Content-Length", "invalid empty Content-Length",
				"unsupported transfer encoding", "too many transfer encodings"} {
				if _, err := try(t, faultClient(t, s, 5*time.Second), s); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("GET %d: %v; want %q", i, err, want)
				}
			}
		}},
		{MalformedChunked, 5, 5, func(t *testing.T, s *FaultServer) {
			for i, want := range []string{"invalid byte in chunk length", "chunk length too large", "invalid CR in chunked line",
				"chunked line ends with bare LF", "malformed chunked encoding"} {
				resp, err := try(t, faultClient(t, s, 5*time.Second), s)
				if err != nil {
					t.Fatalf("GET %d: %v; want 200", i, err)
				}
				if _, err := io.ReadAll(resp.Body); resp.StatusCode != 200 || err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("GET %d: %d, body %v; want 200 and %q", i, resp.StatusCode, err, want)
				}
			}
		}},
		{H2ResetInternal, 1, 2, func(t *testing.T, s *FaultServer) {
			c := faultClient(t, s, 5*time.Second)
			for i := range 2 {
				if _, err := try(t, c, s); err == nil || !strings.Contains(err.Error(), "INTERNAL_ERROR") {
					t.Errorf("request %d: %v; want a stream reset with INTERNAL_ERROR", i, err)
				}
			}
		}},
		{NoContentBody, 1, 1, func(t *testing.T, s *FaultServer) { checkLeftover(t, s, 204) }},
		{NotModifiedBody, 1, 1, func(t *testing.T, s *FaultServer) { checkLeftover(t, s, 304) }},
		{MixedALPN, 4, 4, func(t *testing.T, s *FaultServer) {
			for i, want := range []int{2, 1, 2, 1} {
				// A connection of its own, closed after the answer: net/http
				// would read the leftover of an idle one and log it.
				resp, err := try(t, pinnedClient(t, s.Addr(), s.PKI().ClientConfig(""), false), s)
				if err != nil || resp.ProtoMajor != want {
					t.Fatalf("connection %d: %v, %v; want HTTP/%d", i+1, resp, err, want)
				}
				if wantStatus := map[int]int{2: 200, 1: 204}[want]; resp.StatusCode != wantStatus {
					t.Errorf("connection %d: %d; want %d", i+1, resp.StatusCode, wantStatus)
				}
			}
		}},
		{H2BadStatus, 1, 3, func(t *testing.T, s *FaultServer) {
			c := faultClient(t, s, 5*time.Second)
			for i, want := range []int{1000, 99, 600} {
				resp, err := try(t, c, s)
				if err != nil || resp.StatusCode != want || resp.ProtoMajor != 2 {
					t.Errorf("request %d: %v, %v; want HTTP/2 %d", i, resp, err, want)
				}
			}
		}},
	}
	if got := len(tests); got != len(Faults()) {
		t.Errorf("%d faults tested; want all %d", got, len(Faults()))
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			t.Parallel()
			s := StartFault(t, tt.fault, FaultOptions{Interval: iv, GoAwayAfter: 2})
			tt.check(t, s)
			waitFor(t, 5*time.Second, "connection count", func() bool { return s.Conns() >= tt.wantConns })
			waitFor(t, 5*time.Second, "head count", func() bool { return s.Heads() >= tt.wantHeads })
			conns := s.Conns()
			if tt.fault == H2GoAway || tt.fault == H2CGoAway {
				// net/http may dial a spare connection while it handles a
				// GOAWAY; what counts is that each connection answered 2.
				conns = min(conns, tt.wantConns)
			}
			if conns != tt.wantConns || s.Heads() != tt.wantHeads {
				t.Errorf("%s: %d connections, %d heads; want %d, %d", tt.fault, s.Conns(), s.Heads(), tt.wantConns, tt.wantHeads)
			}
		})
	}
}

// checkLeftover reads one answer of status from s and, on the same
// connection, the Leftover after it.
func checkLeftover(t *testing.T, s *FaultServer, status int) {
	t.Helper()
	_, br := rawGet(t, s)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil || resp.StatusCode != status || resp.Header.Get("Content-Length") != strconv.Itoa(len(Leftover)) {
		t.Fatalf("answer: %v, %v; want %d announcing %d bytes", resp, err, status, len(Leftover))
	}
	if next, err := http.ReadResponse(br, nil); err != nil || next.StatusCode != 299 {
		t.Errorf("after the %d: %v, %v; want the leftover 299", status, next, err)
	}
}

// checkTLSFault fails unless a client that verifies the certificate
// rejects it as bad says, and one that does not gets its answer.
func checkTLSFault(t *testing.T, s *FaultServer, bad func(error) bool) {
	t.Helper()
	if _, err := try(t, faultClient(t, s, 5*time.Second), s); !bad(err) {
		t.Errorf("GET verifying the certificate: %v; not the error a %s certificate gives", err, s.Fault())
	}
	insecure := pinnedClient(t, s.Addr(), &tls.Config{InsecureSkipVerify: true}, false)
	resp, err := try(t, insecure, s)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("GET without verification: %v, %v; want 200", resp, err)
	}
}

// checkGoAway sends 6 requests in turn over HTTP/2; the server answers 2 per
// connection and sends GOAWAY, so the client moves to a new connection.
func checkGoAway(t *testing.T, s *FaultServer, c *http.Client) {
	t.Helper()
	for i := range 6 {
		resp, err := try(t, c, s)
		if err != nil {
			t.Fatalf("request %d: %v; want 200", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
			t.Errorf("request %d: %s %d; want HTTP/2 200", i, resp.Proto, resp.StatusCode)
		}
	}
	// The GOAWAY follows the answer: wait for the last one to be counted.
	waitFor(t, 5*time.Second, "3 GOAWAYs", func() bool { return s.GoAways() >= 3 })
	if s.GoAways() != 3 {
		t.Errorf("GoAways() = %d; want 3", s.GoAways())
	}
}

// TestFaultsStopWithTest leaves a client connection open on every fault
// that never finishes by itself, ends the server's test, and checks the
// server closed the connection and its goroutines returned (its cleanup
// fails the subtest otherwise).
func TestFaultsStopWithTest(t *testing.T) {
	t.Parallel()
	for _, f := range []Fault{AcceptNoRead, ReadNoAnswer, SlowHeaders, EndlessChunked, TrickleHuge, EndlessInformational, SwitchingProtocols, H2CGoAway} {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			var conn net.Conn
			t.Run("server", func(t *testing.T) {
				s := StartFault(t, f, FaultOptions{Interval: time.Hour})
				c, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				conn = c
				req := "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n"
				if f == H2CGoAway {
					req = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" // the preface, then nothing
				}
				io.WriteString(c, req)
				want := int64(1)
				if f == AcceptNoRead || f == H2CGoAway {
					want = 0
				}
				waitFor(t, 5*time.Second, "request read", func() bool { return s.Conns() == 1 && s.Heads() == want })
			})
			defer conn.Close()
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := io.Copy(io.Discard, conn)
			if isTimeout(err) {
				t.Errorf("the connection is still open 5s after the server's test ended")
			}
		})
	}
}

func TestRawServer(t *testing.T) {
	t.Parallel()
	s := StartRaw(t, Lo4a, func(c net.Conn) {
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return
		}
		io.WriteString(c, "echo "+line)
		ResetConn(c)
	})
	for i := range 2 {
		c, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "hello\n")
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if line != "echo hello\n" || err != nil {
			t.Errorf("connection %d: %q, %v; want the echo", i, line, err)
		}
		if _, err := br.ReadByte(); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("connection %d after the echo: %v; want a reset", i, err)
		}
	}
	if s.Conns() != 2 || s.Port() != s.Addr().Port() {
		t.Errorf("Conns() = %d; want 2", s.Conns())
	}
}

func TestSilentListener(t *testing.T) {
	t.Parallel()
	for _, a := range AvailableLoopbacks() {
		c, err := net.DialTimeout("tcp", SilentListener(t, a).String(), 5*time.Second)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer c.Close()
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); !isTimeout(err) {
			t.Errorf("%s: read %v; want a timeout", a, err)
		}
	}
}
