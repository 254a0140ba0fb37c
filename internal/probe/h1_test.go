package probe

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// h1Rec is what one request of h1Run gave.
type h1Rec struct {
	status   int
	bytes    int64
	body     string
	server   string
	values   []string
	err      error
	class    ErrorClass
	reused   bool
	connReq  int  // ordinal on its connection
	reusable bool // the connection may carry the next request
	local    netip.AddrPort
	elapsed  time.Duration
}

// h1Run sends n requests through one h1 client the way the engine will: a
// new connection when there is none, Connection: close on the maxPerConn-th
// request of a connection (0 = no limit), each request bounded by timeout.
// It fails the test when a request outlives its deadline by more than a
// loaded machine explains.
func h1Run(t *testing.T, d *h1Dialer, tmpl *h1Template, n, maxPerConn int, timeout time.Duration, resp *h1Response) []h1Rec {
	t.Helper()
	var c *h1Conn
	defer func() {
		if c != nil {
			c.close()
		}
	}()
	var out []h1Rec
	for i := range n {
		start := time.Now()
		deadline := start.Add(timeout)
		var rec h1Rec
		if c == nil {
			var err error
			c, err = d.dial(t.Context(), deadline)
			if err != nil {
				rec.err, rec.class, rec.elapsed = err, Classify(err), time.Since(start)
				out = append(out, rec)
				continue
			}
		}
		last := maxPerConn > 0 && c.requests()+1 >= maxPerConn
		id := "pinprobe-test-" + strconv.Itoa(i+1)
		err := c.roundTrip(tmpl, id, last, deadline, resp)
		rec.elapsed = time.Since(start)
		var res Result
		res.Start = start
		c.result(&res, resp)
		rec.status, rec.bytes, rec.reused, rec.local = res.Status, res.Bytes, res.Reused, res.Local
		rec.body, rec.server = string(resp.body), resp.server
		rec.values = append([]string(nil), resp.values...)
		rec.err, rec.class = err, Classify(err)
		rec.connReq = c.requests()
		rec.reusable = c.reusable()
		if !c.reusable() {
			c = nil
		}
		if limit := timeout + 3*time.Second; rec.elapsed > limit {
			t.Errorf("request %d took %v; want at most %v (timeout %v)", i+1, rec.elapsed, limit, timeout)
		}
		out = append(out, rec)
	}
	return out
}

// h1Target returns a template and a dialer for raw (a URL naming the test
// host) pinned to addr, with o's connection settings.
func h1Target(t testing.TB, raw string, addr netip.Addr, method string, body []byte, o ConnOptions, alpn []string) (*h1Template, *h1Dialer) {
	t.Helper()
	ep := endpoints(t, raw, addr)[0]
	ep.Target.Method = method
	ep.Target.Body = body
	tmpl, err := newH1Template(ep.Target, "pinprobe-test")
	if err != nil {
		t.Fatalf("newH1Template: %v", err)
	}
	return tmpl, newH1Dialer(ep, o, alpn)
}

// TestH1AgainstNetHTTP runs request sequences against net/http servers and
// checks what each request got, which connection it used, and that the
// server saw exactly the requests sent (nothing is retried).
func TestH1AgainstNetHTTP(t *testing.T) {
	big := make([]byte, 8<<20)
	rand.Read(big)
	payloadSmall := bytes.Repeat([]byte("0123456789abcdef"), 640)    // 10 KiB: written inline
	payloadLarge := bytes.Repeat([]byte("fedcba9876543210"), 300<<6) // 300 KiB: written beside the read
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body) // net/http cannot read a body after writing much of the response
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Write(b)
	})
	type want struct {
		status   int
		bytes    int64
		body     string // prefix kept; checked when not ""
		reused   bool
		connReq  int
		reusable bool
	}
	ok := func(connReq int, reusable bool) want {
		return want{status: 200, bytes: 3, body: "ok\n", reused: connReq > 1, connReq: connReq, reusable: reusable}
	}
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		method     string
		body       []byte
		maxPerConn int
		want       []want
		wantConns  int
	}{
		{
			name: "keep-alive", method: "GET",
			handler:   func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) },
			want:      []want{ok(1, true), ok(2, true), ok(3, true), ok(4, true)},
			wantConns: 1,
		},
		{
			name: "at most two requests per connection", method: "GET", maxPerConn: 2,
			handler:   func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) },
			want:      []want{ok(1, true), ok(2, false), ok(1, true), ok(2, false), ok(1, true)},
			wantConns: 3,
		},
		{
			name: "server says Connection: close", method: "GET",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Connection", "close")
				w.Write([]byte("ok\n"))
			},
			want:      []want{ok(1, false), ok(1, false), ok(1, false)},
			wantConns: 3,
		},
		{
			name: "chunked with trailers", method: "GET",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Trailer", "X-Checksum")
				for _, s := range []string{"hello ", "chunked ", "world\n"} {
					io.WriteString(w, s)
					w.(http.Flusher).Flush()
				}
				w.Header().Set("X-Checksum", "abc")
			},
			want: []want{
				{status: 200, bytes: 20, body: "hello chunked world\n", connReq: 1, reusable: true},
				{status: 200, bytes: 20, body: "hello chunked world\n", reused: true, connReq: 2, reusable: true},
			},
			wantConns: 1,
		},
		{
			name: "HEAD ignores the Content-Length", method: "HEAD",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "1000")
				w.Write(make([]byte, 1000))
			},
			want:      []want{{status: 200, connReq: 1, reusable: true}, {status: 200, reused: true, connReq: 2, reusable: true}},
			wantConns: 1,
		},
		{
			name: "204 No Content", method: "GET",
			handler:   func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) },
			want:      []want{{status: 204, connReq: 1, reusable: true}, {status: 204, reused: true, connReq: 2, reusable: true}},
			wantConns: 1,
		},
		{
			name: "304 Not Modified", method: "GET",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("ETag", `"v1"`)
				w.WriteHeader(304)
			},
			want:      []want{{status: 304, connReq: 1, reusable: true}, {status: 304, reused: true, connReq: 2, reusable: true}},
			wantConns: 1,
		},
		{
			name: "103 Early Hints before the response", method: "GET",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", "</style.css>; rel=preload")
				w.WriteHeader(103)
				w.WriteHeader(200)
				w.Write([]byte("ok\n"))
			},
			want:      []want{ok(1, true), ok(2, true)},
			wantConns: 1,
		},
		{
			name: "500 with a body", method: "GET",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "upstream exploded", 500)
			},
			want: []want{
				{status: 500, bytes: 18, body: "upstream exploded\n", connReq: 1, reusable: true},
				{status: 500, bytes: 18, body: "upstream exploded\n", reused: true, connReq: 2, reusable: true},
			},
			wantConns: 1,
		},
		{
			name: "8 MiB body", method: "GET",
			handler: func(w http.ResponseWriter, r *http.Request) { w.Write(big) },
			want: []want{
				{status: 200, bytes: int64(len(big)), body: string(big[:BodyPrefix]), connReq: 1, reusable: true},
				{status: 200, bytes: int64(len(big)), body: string(big[:BodyPrefix]), reused: true, connReq: 2, reusable: true},
			},
			wantConns: 1,
		},
		{
			name: "POST 10 KiB echoed", method: "POST", body: payloadSmall, handler: echo,
			want: []want{
				{status: 200, bytes: int64(len(payloadSmall)), body: string(payloadSmall[:BodyPrefix]), connReq: 1, reusable: true},
				{status: 200, bytes: int64(len(payloadSmall)), body: string(payloadSmall[:BodyPrefix]), reused: true, connReq: 2, reusable: true},
			},
			wantConns: 1,
		},
		{
			name: "POST 300 KiB echoed", method: "POST", body: payloadLarge, handler: echo,
			want: []want{
				{status: 200, bytes: int64(len(payloadLarge)), body: string(payloadLarge[:BodyPrefix]), connReq: 1, reusable: true},
				{status: 200, bytes: int64(len(payloadLarge)), body: string(payloadLarge[:BodyPrefix]), reused: true, connReq: 2, reusable: true},
			},
			wantConns: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &connLog{}
			port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				l.record(r)
				tc.handler.ServeHTTP(w, r)
			}), nil, testserver.Lo4a)
			tmpl, d := h1Target(t, hostURL("http", port), testserver.Lo4a, tc.method, tc.body, ConnOptions{Timeout: 5 * time.Second}, nil)
			resp := newH1Response(BodyPrefix)
			recs := h1Run(t, d, tmpl, len(tc.want), tc.maxPerConn, 10*time.Second, resp)
			for i, w := range tc.want {
				r := recs[i]
				if r.err != nil {
					t.Errorf("request %d: %v", i+1, r.err)
					continue
				}
				if r.status != w.status || r.bytes != w.bytes || r.reused != w.reused || r.connReq != w.connReq || r.reusable != w.reusable {
					t.Errorf("request %d: got status %d, %d bytes, reused %v, conn request %d, reusable %v; want %d, %d, %v, %d, %v",
						i+1, r.status, r.bytes, r.reused, r.connReq, r.reusable, w.status, w.bytes, w.reused, w.connReq, w.reusable)
				}
				if w.body != "" && r.body != w.body {
					t.Errorf("request %d: got body prefix %s; want %s", i+1, clip([]byte(r.body)), clip([]byte(w.body)))
				}
				if w.connReq > 1 && r.local != recs[i-1].local {
					t.Errorf("request %d: got local address %v, previous %v; want the same connection", i+1, r.local, recs[i-1].local)
				}
			}
			reqs, conns := len(l.seen()), len(l.ports())
			if reqs != len(tc.want) || conns != tc.wantConns {
				t.Errorf("server saw %d requests on %d connections; want %d on %d", reqs, conns, len(tc.want), tc.wantConns)
			}
		})
	}
}

// TestH1RequestOnTheWire checks the request the template renders as a
// net/http server parses it: method, request-target, Host (URL host:port, or
// the user's override), User-Agent, user headers, X-Request-Id,
// Authorization from the URL's userinfo, Content-Length and body.
func TestH1RequestOnTheWire(t *testing.T) {
	type seenReq struct {
		method, uri, host, ua, id, auth, custom string
		contentLength                           int64
		body                                    string
		close                                   bool
	}
	got := make(chan seenReq, 1)
	port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seenReq{r.Method, r.RequestURI, r.Host, r.UserAgent(), r.Header.Get("X-Request-Id"),
			r.Header.Get("Authorization"), strings.Join(r.Header.Values("X-Custom"), "|"), r.ContentLength, string(b), r.Close}
	}), nil, testserver.Lo4a)
	hp := net.JoinHostPort(testHost, strconv.Itoa(int(port)))
	tests := []struct {
		name   string
		url    string
		method string
		header http.Header
		body   string
		last   bool
		want   seenReq
	}{
		{
			name: "GET with query", url: "http://" + hp + "/a/b%20c?x=1&y=2", method: "GET",
			want: seenReq{method: "GET", uri: "/a/b%20c?x=1&y=2", host: hp, ua: "pinprobe-test", id: "id-1"},
		},
		{
			name: "user headers, Host override, User-Agent", url: "http://" + hp + "/", method: "GET",
			header: http.Header{"Host": {"other.example"}, "User-Agent": {"curl/8"}, "X-Custom": {"a", "b"}},
			want:   seenReq{method: "GET", uri: "/", host: "other.example", ua: "curl/8", id: "id-1", custom: "a|b"},
		},
		{
			name: "POST body and userinfo", url: "http://user:p%40ss@" + hp + "/post", method: "POST", body: "hello",
			want: seenReq{method: "POST", uri: "/post", host: hp, ua: "pinprobe-test", id: "id-1",
				auth: "Basic dXNlcjpwQHNz", contentLength: 5, body: "hello"},
		},
		{
			name: "explicit Authorization wins over userinfo", url: "http://user:pw@" + hp + "/", method: "PUT",
			header: http.Header{"Authorization": {"Bearer t"}},
			want:   seenReq{method: "PUT", uri: "/", host: hp, ua: "pinprobe-test", id: "id-1", auth: "Bearer t"},
		},
		{
			name: "last request asks to close", url: "http://" + hp + "/", method: "DELETE", last: true,
			want: seenReq{method: "DELETE", uri: "/", host: hp, ua: "pinprobe-test", id: "id-1", close: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := ParseTarget(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			tg.Method, tg.Header, tg.Body = tc.method, tc.header, []byte(tc.body)
			tmpl, err := newH1Template(tg, "pinprobe-test")
			if err != nil {
				t.Fatalf("newH1Template: %v", err)
			}
			c, err := newH1Dialer(&Endpoint{Target: tg, Addr: testserver.Lo4a}, ConnOptions{Timeout: 5 * time.Second}, nil).dial(t.Context(), time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			if err := c.roundTrip(tmpl, "id-1", tc.last, time.Now().Add(5*time.Second), newH1Response(0)); err != nil {
				t.Fatalf("roundTrip: %v", err)
			}
			if g := <-got; g != tc.want {
				t.Errorf("server got %+v; want %+v", g, tc.want)
			}
		})
	}
}

// TestH1TemplateRejects lists requests the template refuses to render.
func TestH1TemplateRejects(t *testing.T) {
	tests := []struct {
		name   string
		method string
		header http.Header
	}{
		{"method with a space", "GE T", nil},
		{"CONNECT", "CONNECT", nil},
		{"header name with a colon", "GET", http.Header{"X-A:b": {"1"}}},
		{"header value with a newline", "GET", http.Header{"X-A": {"1\r\nX-Injected: 2"}}},
		{"Host override with a newline", "GET", http.Header{"Host": {"a\r\nb"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := ParseTarget("http://" + testHost + "/")
			if err != nil {
				t.Fatal(err)
			}
			tg.Method, tg.Header = tc.method, tc.header
			if tmpl, err := newH1Template(tg, "ua"); err == nil {
				t.Errorf("newH1Template rendered %q; want an error", tmpl.head)
			}
		})
	}
}

// TestH1AppendRequest pins the rendered bytes: field order, the request ID
// slot, Connection: close on the last request, the body.
func TestH1AppendRequest(t *testing.T) {
	tg, err := ParseTarget("http://" + testHost + ":8080/p?q=1")
	if err != nil {
		t.Fatal(err)
	}
	tg.Method, tg.Body = "POST", []byte("xy")
	tg.Header = http.Header{"X-B": {"2"}, "X-A": {"1"}, "Content-Length": {"99"}}
	tmpl, err := newH1Template(tg, "ua/1")
	if err != nil {
		t.Fatal(err)
	}
	head := "POST /p?q=1 HTTP/1.1\r\nHost: " + testHost + ":8080\r\nUser-Agent: ua/1\r\nContent-Length: 2\r\nX-A: 1\r\nX-B: 2\r\n"
	tests := []struct {
		id   string
		last bool
		want string
	}{
		{"", false, head + "\r\nxy"},
		{"r-1", false, head + "X-Request-Id: r-1\r\n\r\nxy"},
		{"r-2", true, head + "X-Request-Id: r-2\r\nConnection: close\r\n\r\nxy"},
	}
	for _, tc := range tests {
		if got := string(tmpl.appendRequest(nil, tc.id, tc.last)); got != tc.want {
			t.Errorf("appendRequest(%q, %v) = %q; want %q", tc.id, tc.last, got, tc.want)
		}
	}
}

// TestH1HeaderCapture checks the Server header, captured instance headers
// and the full header set of a response, over several responses of one
// connection.
func TestH1HeaderCapture(t *testing.T) {
	var n int
	var mu sync.Mutex
	port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		w.Header()["Server"] = []string{"edge/1.2"}
		w.Header().Set("X-Served-By", fmt.Sprintf("node-%d", k%2))
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.Write([]byte("ok\n"))
	}), nil, testserver.Lo4a)
	tmpl, d := h1Target(t, hostURL("http", port), testserver.Lo4a, "GET", nil, ConnOptions{Timeout: 5 * time.Second}, nil)
	resp := newH1Response(BodyPrefix, "x-served-by", "X-Absent")
	recs := h1Run(t, d, tmpl, 4, 0, 5*time.Second, resp)
	for i, r := range recs {
		want := []string{fmt.Sprintf("node-%d", (i+1)%2), ""}
		if r.err != nil || r.server != "edge/1.2" || fmt.Sprint(r.values) != fmt.Sprint(want) {
			t.Errorf("request %d: got server %q, values %q, err %v; want %q, %q, nil", i+1, r.server, r.values, r.err, "edge/1.2", want)
		}
	}
	h := resp.header()
	if got := h.Values("Set-Cookie"); fmt.Sprint(got) != "[a=1 b=2]" {
		t.Errorf("header Set-Cookie = %q; want [a=1 b=2]", got)
	}
	if got := h.Get("Content-Length"); got != "3" {
		t.Errorf("header Content-Length = %q; want 3", got)
	}

}
