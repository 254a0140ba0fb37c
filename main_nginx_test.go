package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// nginxBinary finds nginx; outside CI a machine without it skips the test,
// in CI (.ci/run installs nginx) its absence is a failure.
func nginxBinary(t *testing.T) string {
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("nginx is not installed: .ci/run installs it")
	}
	t.Skip("nginx not installed (apt-get install nginx); .ci/run installs it")
	return ""
}

// TestNginxGatewayIPv6Backend reproduces the incident with a real gateway:
// nginx listens on 127.0.0.1 and [::1] on one port; the IPv4 server proxies
// to a healthy backend, the IPv6 server to an IPv6 backend address nothing
// listens on, so nginx itself answers 502 Bad Gateway. pinprobe must pin
// each address and put every 502 on ::1.
func TestNginxGatewayIPv6Backend(t *testing.T) {
	nginx := nginxBinary(t)
	if !hasIPv6Loopback() {
		t.Skip("no IPv6 loopback here")
	}

	backend := startFleet(t, fleetOpts{each: func(n int64, r *http.Request) answer {
		return answer{status: http.StatusOK, body: "signed\n"}
	}}, "127.0.0.1")

	dead, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	port, lns := listenPort(t, "127.0.0.1", "::1") // a port free on both, for nginx
	for _, ln := range lns {
		ln.Close()
	}
	dir := t.TempDir()
	conf := fmt.Sprintf(`worker_processes 1;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s; uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  server { listen 127.0.0.1:%[2]d; location / { proxy_pass http://%[3]s; } }
  server { listen [::1]:%[2]d; location / { proxy_pass http://%[4]s; } }
}
`, dir, port, net.JoinHostPort("127.0.0.1", strconv.Itoa(backend.port)), deadAddr)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nginx, "-c", confPath, "-p", dir)
	var nginxErr bytes.Buffer
	cmd.Stderr = &nginxErr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	waitListening(t, "127.0.0.1:"+strconv.Itoa(port), &nginxErr)
	waitListening(t, "[::1]:"+strconv.Itoa(port), &nginxErr)

	host := "gw.test:" + strconv.Itoa(port)
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "400", "--requests", "80",
		"--resolve", host+":127.0.0.1,::1", "http://"+host+"/sign")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if got := rep.Families["ipv6"]; got.Requests == 0 || got.Failed != got.Requests {
		t.Errorf("ipv6 family: got %d failed of %d; want all failed", got.Failed, got.Requests)
	}
	if got := rep.Families["ipv4"]; got.Requests == 0 || got.Failed != 0 {
		t.Errorf("ipv4 family: got %d failed of %d; want none", got.Failed, got.Requests)
	}
	for _, e := range rep.Endpoints {
		switch e.Address {
		case "::1":
			if e.Status["502"] != e.Requests || len(e.Errors) != 0 {
				t.Errorf("::1: got status %v errors %v; want all %d requests answered 502 by nginx", e.Status, e.Errors, e.Requests)
			}
		case "127.0.0.1":
			if e.Status["200"] != e.Requests {
				t.Errorf("127.0.0.1: got status %v; want all %d 200", e.Status, e.Requests)
			}
		default:
			t.Errorf("unexpected endpoint %s", e.Address)
		}
	}
}

func waitListening(t *testing.T, addr string, log *bytes.Buffer) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nginx did not listen on %s within 10s; its stderr:\n%s", addr, log.String())
}
