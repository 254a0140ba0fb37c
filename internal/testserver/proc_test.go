package testserver

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestParseProcAddr(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"0200007F:0050", "127.0.0.2:80"},
		{"00000000000000000000000001000000:8B4F", "[::1]:35663"},
		{"0000000000000000FFFF00000100007F:0016", "127.0.0.1:22"},
	}
	for _, tt := range tests {
		got, err := parseProcAddr(tt.in)
		if err != nil || got.String() != tt.want {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// checkGroupGone fails unless no process of group pgid is alive and the
// ports are free again.
func checkGroupGone(t *testing.T, name string, pgid int, addrs ...netip.AddrPort) {
	t.Helper()
	if left := GroupProcesses(pgid); len(left) != 0 {
		t.Errorf("%s: processes %v of group %d alive after the test's cleanup", name, left, pgid)
	}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a.String())
		if err != nil {
			t.Errorf("%s: %s still taken after cleanup: %v", name, a, err)
			continue
		}
		ln.Close()
	}
}

// TestNginx runs nginx on 127.0.0.1 (and [::1]), checks it answers, that
// its group holds a master and a worker, and that after the test's cleanup
// no process of the group is left and the ports are free.
func TestNginx(t *testing.T) {
	t.Parallel()
	addrs := []netip.Addr{Lo4a}
	if HasIPv6Loopback() {
		addrs = append(addrs, Lo6)
	}
	port := FreePort(t, addrs...)
	var listen []netip.AddrPort
	var conf strings.Builder
	conf.WriteString("  server {\n")
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, port)
		listen = append(listen, ap)
		fmt.Fprintf(&conf, "    listen %s;\n", ap)
	}
	conf.WriteString("    add_header X-Test nginx always;\n    location / { return 200 \"hello from $server_addr\\n\"; }\n  }\n")
	NginxBinary(t) // skips the test, not just its subtest, where there is none
	var pgid int
	t.Run("run", func(t *testing.T) {
		p := Nginx(t, conf.String(), listen...)
		pgid = p.PGID
		for _, ap := range listen {
			code, h, body := get(t, pinnedClient(t, ap, nil, false), "http://"+hostPort("app.test", port)+"/")
			if code != 200 || h.Get("X-Test") != "nginx" || body != fmt.Sprintf("hello from %s\n", ap.Addr()) {
				t.Errorf("%s: %d %q %q; want nginx's 200", ap, code, h.Get("X-Test"), body)
			}
		}
		if n := len(GroupProcesses(pgid)); n < 2 {
			t.Errorf("group %d has %d processes; want nginx's master and worker", pgid, n)
		}
	})
	checkGroupGone(t, "nginx", pgid, listen...)
}

// TestHAProxy runs haproxy in TCP mode in front of a Go server and checks
// the same as TestNginx.
func TestHAProxy(t *testing.T) {
	t.Parallel()
	backend := StartFleet(t, FleetOptions{Host: "127.0.0.1"}, Lo4a)
	port := FreePort(t, Lo4a)
	ap := netip.AddrPortFrom(Lo4a, port)
	HAProxyBinary(t) // skips the test, not just its subtest, where there is none
	var pgid int
	t.Run("run", func(t *testing.T) {
		p := HAProxy(t, fmt.Sprintf("listen fe\n  mode tcp\n  bind %s\n  server be %s\n", ap, netip.AddrPortFrom(Lo4a, backend.Port())), ap)
		pgid = p.PGID
		code, _, body := get(t, pinnedClient(t, ap, nil, false), fmt.Sprintf("http://127.0.0.1:%d/", backend.Port()))
		if code != 200 || body != "127.0.0.1 answers 200\n" {
			t.Errorf("through haproxy: %d %q; want the backend's 200", code, body)
		}
	})
	checkGroupGone(t, "haproxy", pgid, ap)
	if backend.Total() != 1 {
		t.Errorf("backend saw %d requests; want 1", backend.Total())
	}
}

// TestProcessPortTaken holds the port haproxy must bind: StartProcess must
// not take our listener for haproxy's, and reports that haproxy exited.
func TestProcessPortTaken(t *testing.T) {
	t.Parallel()
	port, _ := ListenSamePort(t, Lo4a) // held until the test ends
	ap := netip.AddrPortFrom(Lo4a, port)
	p, err := startProcess(haproxySpec(t, fmt.Sprintf("listen fe\n  mode tcp\n  bind %s\n  server be 127.0.0.1:1\n", ap), []netip.AddrPort{ap}))
	if p != nil {
		defer func() {
			if err := p.Stop(); err != nil {
				t.Error(err)
			}
			checkGroupGone(t, "haproxy", p.PGID)
		}()
	}
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("startProcess on a taken port: %v; want haproxy to have exited", err)
	}
}
