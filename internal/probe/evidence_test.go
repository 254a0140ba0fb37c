package probe

import (
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestEvidenceBounded answers 502 with headers no report can hold (up to
// the 1 MiB a head may take on either path): what a sample keeps is bounded
// (64 lines, 512 bytes a value, 8 KiB in all, the body's first 512 bytes)
// and says it was cut; so are the Server of the fingerprint and the GroupBy
// values; on both request paths.
func TestEvidenceBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		header        func(h http.Header)
		wantTruncated bool
		wantLines     int // -1: do not check
	}{
		{"1000 headers", func(h http.Header) {
			for i := range 1000 {
				h.Set("X-H"+strconv.Itoa(i), "v")
			}
		}, true, MaxEvidenceHeaders},
		{"1 MB of headers", func(h http.Header) {
			for i := range 100 {
				h.Set("X-Big"+strconv.Itoa(i), strings.Repeat("b", 10_000))
			}
		}, true, -1},
		{"two 400 kB headers", func(h http.Header) {
			h.Set("Server", strings.Repeat("s", 400_000))
			h.Set("X-Served-By", strings.Repeat("n", 400_000))
		}, true, -1},
		{"a few headers", func(h http.Header) {
			h.Set("Server", "nginx")
			h.Add("X-Multi", "a")
			h.Add("X-Multi", "b")
		}, false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachClient(t, func(t *testing.T, client ClientKind) {
				testEvidenceBounded(t, client, tt.header, tt.wantTruncated, tt.wantLines)
			})
		})
	}
}

func testEvidenceBounded(t *testing.T, client ClientKind, header func(http.Header), wantTruncated bool, wantLines int) {
	port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header(w.Header())
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte(strings.Repeat("body ", 1000)))
	}), nil, testserver.Lo4a)
	eps := endpoints(t, hostURL("http", port), testserver.Lo4a)
	o := Options{Rate: 100, Requests: 1, GroupBy: []string{"X-Served-By"}, Client: client,
		Evidence: Evidence{Failed: func(s int) bool { return s >= 500 }, Samples: 1}}
	rs := sentOnly(attack(t, eps, o, 10*time.Second))
	if len(rs) != 1 || rs[0].Evidence == nil || rs[0].Status != http.StatusBadGateway {
		t.Fatalf("results %+v; want one 502 with evidence", rs)
	}
	r, ev := rs[0], rs[0].Evidence
	lines, size := 0, 0
	for k, vs := range ev.Header {
		for _, v := range vs {
			lines++
			size += len(k) + len(": \r\n") + len(v)
			if len(v) > MaxEvidenceValue {
				t.Errorf("%s: a value of %d bytes; want at most %d", k, len(v), MaxEvidenceValue)
			}
		}
	}
	if lines > MaxEvidenceHeaders || size > MaxEvidenceHeaderBytes || len(ev.Body) != BodyPrefix {
		t.Errorf("kept %d lines, %d bytes of header, %d of body; want at most %d, %d and %d", lines, size, len(ev.Body), MaxEvidenceHeaders, MaxEvidenceHeaderBytes, BodyPrefix)
	}
	if wantLines >= 0 && lines != wantLines {
		t.Errorf("kept %d lines; want %d", lines, wantLines)
	}
	if ev.Truncated != wantTruncated {
		t.Errorf("Truncated = %v; want %v", ev.Truncated, wantTruncated)
	}
	if !wantTruncated && (!slices.Equal(ev.Header["X-Multi"], []string{"a", "b"}) || ev.Header.Get("Server") != "nginx") {
		t.Errorf("header %v; want every line kept", ev.Header)
	}
	if len(r.Server) > MaxEvidenceValue || len(r.Groups) > 0 && len(r.Groups[0]) > MaxEvidenceValue {
		t.Errorf("Server of %d bytes, groups %d; want at most %d", len(r.Server), len(r.Groups), MaxEvidenceValue)
	}
}

// TestURLCredentials sends a URL's user and password as curl does: Basic
// authorization, never userinfo on the wire; a user alone is "user:"; a
// -H Authorization wins.
func TestURLCredentials(t *testing.T) {
	t.Parallel()
	eachClient(t, testURLCredentials)
}

func testURLCredentials(t *testing.T, client ClientKind) {
	type seenReq struct {
		auth, uri, host string
		raw             string
	}
	seen := make(chan seenReq, 10)
	port := testserver.StartRaw(t, testserver.Lo4a, func(c net.Conn) {
		raw, req, err := readRaw(c)
		if err != nil {
			return
		}
		seen <- seenReq{req.Header.Get("Authorization"), req.RequestURI, req.Host, string(raw)}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	}).Port()
	tests := []struct {
		userinfo string
		header   http.Header
		want     string
	}{
		{"alice:s3cret@", nil, "Basic YWxpY2U6czNjcmV0"},    // alice:s3cret
		{"t0ken@", nil, "Basic dDBrZW46"},                   // t0ken:
		{"al%40ice:p%3Ass@", nil, "Basic YWxAaWNlOnA6c3M="}, // al@ice:p:ss
		{"alice:s3cret@", http.Header{"Authorization": {"Bearer xyz"}}, "Bearer xyz"},
		{"", nil, ""},
	}
	for _, tt := range tests {
		raw := "http://" + tt.userinfo + testHost + ":" + strconv.Itoa(int(port)) + "/p?q=1"
		eps := endpoints(t, raw, testserver.Lo4a)
		eps[0].Target.Header = tt.header
		rs := sentOnly(attack(t, eps, Options{Rate: 100, Requests: 1, Client: client}, 10*time.Second))
		if len(rs) != 1 || rs[0].Err != nil {
			t.Fatalf("%s: results %+v; want one success", raw, rs)
		}
		got := <-seen
		if got.auth != tt.want {
			t.Errorf("%s: Authorization %q; want %q", raw, got.auth, tt.want)
		}
		if got.uri != "/p?q=1" || strings.Contains(got.host, "@") || strings.Contains(got.raw, "s3cret") || strings.Contains(got.raw, "alice@") {
			t.Errorf("%s: the server saw request URI %q, Host %q; want no credentials on the wire but the header:\n%s", raw, got.uri, got.host, got.raw)
		}
	}
}

// TestGroupBy carries the values of the GroupBy headers on every result,
// on both request paths.
func TestGroupBy(t *testing.T) {
	t.Parallel()
	eachClient(t, testGroupBy)
}

func testGroupBy(t *testing.T, client ClientKind) {
	port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/both":
			w.Header().Set("X-Served-By", "node-7")
			w.Header().Add("X-Pool", "blue")
			w.Header().Add("X-Pool", "canary")
		case "/one":
			w.Header().Set("X-Pool", "green")
		case "/empty":
			w.Header().Set("X-Pool", "")
		}
	}), nil, testserver.Lo4a)
	tests := []struct {
		path    string
		groupBy []string
		want    []string
	}{
		{"/both", []string{"x-served-by", "X-Pool"}, []string{"node-7", "blue, canary"}},
		{"/one", []string{"X-Served-By", "X-Pool"}, []string{"", "green"}},
		{"/none", []string{"X-Served-By", "X-Pool"}, nil},
		{"/empty", []string{"X-Served-By", "X-Pool"}, []string{"", ""}},
		{"/both", nil, nil},
	}
	for _, tt := range tests {
		eps := endpoints(t, hostURL("http", port)+tt.path[1:], testserver.Lo4a)
		rs := sentOnly(attack(t, eps, Options{Rate: 100, Requests: 2, GroupBy: tt.groupBy, Client: client}, 10*time.Second))
		for _, r := range rs {
			if !slices.Equal(r.Groups, tt.want) || (tt.want == nil) != (r.Groups == nil) {
				t.Errorf("%s grouped by %v: Groups %q; want %q", tt.path, tt.groupBy, r.Groups, tt.want)
			}
		}
	}
}

// TestGroupByNoneAllocatesNothing: without GroupBy, or with headers the
// response lacks, grouping costs no allocation.
func TestGroupByNoneAllocatesNothing(t *testing.T) {
	h := http.Header{"X-Served-By": {"node-7"}}
	for _, s := range []*stream{{}, {groupBy: []string{"X-Pool"}}} {
		if n := testing.AllocsPerRun(100, func() { s.groups(h) }); n != 0 {
			t.Errorf("groups(%v): %v allocations; want 0", s.groupBy, n)
		}
	}
}
