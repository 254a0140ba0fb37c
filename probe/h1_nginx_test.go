package probe

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pinprobe/internal/testserver"
)

const nginxBin = "/usr/sbin/nginx"

// startNginx runs nginx in the foreground in its own process group with a
// config in a temp dir, serving www on one port of 127.0.0.1 and [::1], and
// kills the group when the test ends. Without nginx it skips, unless $CI is
// set (CI installs nginx), where it fails.
func startNginx(t *testing.T, www map[string][]byte, locations string) uint16 {
	t.Helper()
	if _, err := os.Stat(nginxBin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("nginx is not installed at %s: %v", nginxBin, err)
		}
		t.Skipf("nginx is not installed at %s", nginxBin)
	}
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
	port, lns := testserver.ListenSamePort(t, testserver.Lo4a, testserver.Lo6)
	for _, ln := range lns {
		ln.Close() // nginx binds the port itself; a loser of this race fails to start below
	}
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
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
	cmd := exec.Command(nginxBin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	errorLog := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return out.String() + string(b)
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("nginx exited: %v\n%s", err, errorLog())
		case <-deadline.C:
			t.Fatalf("nginx did not accept connections within 10s\n%s", errorLog())
		case <-tick.C:
		}
		ready := true
		for _, a := range []netip.Addr{testserver.Lo4a, testserver.Lo6} {
			c, err := net.DialTimeout("tcp", netip.AddrPortFrom(a, port).String(), time.Second)
			if err != nil {
				ready = false
				break
			}
			c.Close()
		}
		if ready {
			return port
		}
	}
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
