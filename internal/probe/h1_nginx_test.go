package probe

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// startNginx runs nginx with testserver.StartProcess (its own process
// group, stopped when the test ends), serving www from a temp dir on one
// port of 127.0.0.1 and [::1] with keepalive_requests 3 and locations in
// its server block, and returns the port. It runs as one process, without
// the worker that testserver.Nginx starts: a worker of a root master would
// run as nobody and could not read the temp dir. Without nginx it skips,
// unless $CI is set (CI installs nginx), where it fails.
func startNginx(t *testing.T, www map[string][]byte, locations string) uint16 {
	t.Helper()
	bin := testserver.NginxBinary(t)
	dir := t.TempDir()
	for name, b := range www {
		p := filepath.Join(dir, "www", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	port := testserver.FreePort(t, testserver.Lo4a, testserver.Lo6)
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log stderr warn;
events { worker_connections 64; }
http {
  access_log off;
  keepalive_requests 3;
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s; uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  types { text/plain txt; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:%[2]d;
    listen [::1]:%[2]d;
    root %[1]s/www;
%[3]s
  }
}
`, dir, port, locations)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	testserver.StartProcess(t, testserver.ProcessSpec{
		Name: "nginx", Path: bin, Dir: dir,
		Args:   []string{"-p", dir + "/", "-e", "stderr", "-c", confPath},
		Listen: []netip.AddrPort{netip.AddrPortFrom(testserver.Lo4a, port), netip.AddrPortFrom(testserver.Lo6, port)},
	})
	return port
}

// TestH1AgainstNginx checks the client against a real nginx: keep-alive up
// to keepalive_requests (nginx then says Connection: close), HEAD, a static
// file, a gzip'd chunked body, nginx's own 404 page, the request ID reaching
// the server, and a 413 sent before nginx reads a too-large body.
func TestH1AgainstNginx(t *testing.T) {
	big := make([]byte, 1<<20)
	rand.Read(big)
	text := bytes.Repeat([]byte("pinprobe sends requests and nginx answers them. "), 400)
	port := startNginx(t, map[string][]byte{"big.bin": big, "gz/text.txt": text}, `
    location = /ok { return 200 "ok\n"; }
    location = /id { return 200 "$http_x_request_id\n"; }
    location = /post { client_max_body_size 1k; return 200 "posted\n"; }
    location /gz/ { gzip on; gzip_min_length 1; gzip_types text/plain; }
`)
	type want struct {
		status   int
		bytes    int64 // -1: not checked
		body     string
		connReq  int
		reusable bool
	}
	ok := func(connReq int, reusable bool) want {
		return want{status: 200, bytes: 3, body: "ok\n", connReq: connReq, reusable: reusable}
	}
	tests := []struct {
		name   string
		addr   netip.Addr
		path   string
		method string
		header http.Header
		body   []byte
		want   []want
		check  func(t *testing.T, r h1Rec)
	}{
		{
			name: "keep-alive to keepalive_requests over IPv4", addr: testserver.Lo4a, path: "/ok",
			want: []want{ok(1, true), ok(2, true), ok(3, false), ok(1, true), ok(2, true), ok(3, false), ok(1, true)},
		},
		{
			name: "keep-alive over IPv6", addr: testserver.Lo6, path: "/ok",
			want: []want{ok(1, true), ok(2, true), ok(3, false)},
		},
		{
			name: "HEAD of a static file", addr: testserver.Lo4a, path: "/big.bin", method: "HEAD",
			want: []want{{status: 200, connReq: 1, reusable: true}, {status: 200, connReq: 2, reusable: true}},
		},
		{
			name: "static file of 1 MiB", addr: testserver.Lo6, path: "/big.bin",
			want: []want{
				{status: 200, bytes: int64(len(big)), body: string(big[:BodyPrefix]), connReq: 1, reusable: true},
				{status: 200, bytes: int64(len(big)), body: string(big[:BodyPrefix]), connReq: 2, reusable: true},
			},
		},
		{
			name: "gzip'd chunked body", addr: testserver.Lo4a, path: "/gz/text.txt", header: http.Header{"Accept-Encoding": {"gzip"}},
			want: []want{{status: 200, bytes: -1, body: "\x1f\x8b", connReq: 1, reusable: true}, {status: 200, bytes: -1, body: "\x1f\x8b", connReq: 2, reusable: true}},
			check: func(t *testing.T, r h1Rec) {
				if r.bytes <= 0 || r.bytes >= int64(len(text)) {
					t.Errorf("gzip'd body of %d bytes; want between 0 and %d", r.bytes, len(text))
				}
			},
		},
		{
			name: "nginx's 404 page", addr: testserver.Lo4a, path: "/missing",
			want: []want{{status: 404, bytes: -1, body: "<html>", connReq: 1, reusable: true}},
			check: func(t *testing.T, r h1Rec) {
				if !strings.HasPrefix(r.server, "nginx") || !strings.Contains(r.body, "404 Not Found") {
					t.Errorf("got server %q, body %q; want nginx's 404 page", r.server, r.body)
				}
			},
		},
		{
			name: "request ID reaches nginx", addr: testserver.Lo4a, path: "/id",
			want: []want{{status: 200, bytes: -1, body: "pinprobe-test-1\n", connReq: 1, reusable: true}, {status: 200, bytes: -1, body: "pinprobe-test-2\n", connReq: 2, reusable: true}},
		},
		{
			name: "413 for a 2 MiB body", addr: testserver.Lo4a, path: "/post", method: "POST", body: bytes.Repeat([]byte("p"), 2<<20),
			want: []want{{status: 413, bytes: -1, body: "<html>", connReq: 1}, {status: 413, bytes: -1, body: "<html>", connReq: 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := ParseTarget(strings.TrimSuffix(hostURL("http", port), "/") + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			tg.Method, tg.Header, tg.Body = tc.method, tc.header, tc.body
			tmpl, err := newH1Template(tg, "pinprobe-test")
			if err != nil {
				t.Fatal(err)
			}
			d := newH1Dialer(&Endpoint{Target: tg, Addr: tc.addr}, ConnOptions{Timeout: 5 * time.Second}, nil)
			recs := h1Run(t, d, tmpl, len(tc.want), 0, 10*time.Second, newH1Response(BodyPrefix))
			for i, w := range tc.want {
				r := recs[i]
				if r.err != nil || r.status != w.status || (w.bytes >= 0 && r.bytes != w.bytes) || r.connReq != w.connReq || r.reusable != w.reusable ||
					!strings.HasPrefix(r.body, w.body) || !strings.HasPrefix(r.server, "nginx/") {
					t.Errorf("request %d: got status %d, %d bytes, conn request %d, reusable %v, server %q, body %s, err %v; want %d, %d, %d, %v, nginx/..., %s..., nil",
						i+1, r.status, r.bytes, r.connReq, r.reusable, r.server, clip([]byte(r.body)), r.err, w.status, w.bytes, w.connReq, w.reusable, clip([]byte(w.body)))
				}
				if r.local.Addr() != tc.addr {
					t.Errorf("request %d: local address %v; want one on %v", i+1, r.local, tc.addr)
				}
				if tc.check != nil {
					tc.check(t, r)
				}
			}
		})
	}
}
