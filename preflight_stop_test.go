package main

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// tlsServer is an HTTPS server on 127.0.0.1 with httptest's certificate
// (for 127.0.0.1, ::1 and example.com), counting the requests it serves.
func tlsServer(t *testing.T) (srv *httptest.Server, served *atomic.Int64, caFile string) {
	t.Helper()
	served = new(atomic.Int64)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, served, caFile
}

// TestPreflightStopsWhenNothingCanWork: when every endpoint fails its
// preflight for the same reason, pinprobe sends no load, exits 3 and names
// the cause and the flag that fixes it.
func TestPreflightStopsWhenNothingCanWork(t *testing.T) {
	srv, served, ca := tlsServer(t)
	port := srv.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	resolve := "--resolve=example.com:" + port + ":127.0.0.1"
	url := "https://example.com:" + port + "/"
	wrongName := "https://app.test:" + port + "/"

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"untrusted CA", []string{resolve, url}, exitNoAddress, []string{"fails TLS verification", "unknown authority", "--cacert FILE", "--insecure"}},
		{"certificate for another name", []string{"--cacert", ca, "--resolve=app.test:" + port + ":127.0.0.1", wrongName}, exitNoAddress,
			[]string{"certificate is for another name", "app.test", "check the URL's host name"}},
		{"trusted", []string{"--cacert", ca, resolve, url}, exitOK, []string{"certificate verified against the host name"}},
		{"insecure says so", []string{"--insecure", resolve, url}, exitOK, []string{"certificate NOT verified: --insecure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := served.Load()
			code, _, stderr := pinprobe(t, append([]string{"-q", "--rate", "200", "-n", "10"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d; want %d; stderr:\n%s", code, tt.code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			sent := served.Load() - before
			if tt.code == exitNoAddress && sent != 0 {
				t.Errorf("the server served %d requests; a stopped run sends none", sent)
			}
			if tt.code == exitOK && sent != 10 {
				t.Errorf("the server served %d requests; want 10", sent)
			}
		})
	}
}

func TestPreflightStopRefusedEverywhere(t *testing.T) {
	f := startFleet(t, fleetOpts{}, "127.0.0.1")
	closed := closedPort(t)
	code, _, stderr := pinprobe(t, "-q", "-n", "5", "--resolve", fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.2", closed), fmt.Sprintf("http://app.test:%d/", closed))
	if code != exitNoAddress || !strings.Contains(stderr, fmt.Sprintf("every address refuses connections on port %d", closed)) ||
		!strings.Contains(stderr, "(not probed)") {
		t.Errorf("exit %d, stderr:\n%s\nwant 3, naming the port, not probed", code, stderr)
	}
	// One address refusing of two: the run goes on and the report shows it.
	code, stdout, stderr := pinprobe(t, "-q", "--format", "json", "--rate", "400", "-n", "40",
		"--resolve", fmt.Sprintf("app.test:%d:127.0.0.1,127.0.0.3", f.port), f.url())
	if code != exitOK || !strings.Contains(stderr, "(probed anyway)") {
		t.Fatalf("exit %d, stderr:\n%s\nwant 0 and the run probed anyway", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	if e := endpointByAddr(t, rep, "127.0.0.3"); e.Errors["connect_refused"] != e.Requests || e.Requests == 0 {
		t.Errorf("127.0.0.3: %d requests, errors %v; want every one refused", e.Requests, e.Errors)
	}
}

// closedPort returns a port nothing listens on at 127.0.0.1 or 127.0.0.2.
func closedPort(t *testing.T) int {
	t.Helper()
	port, lns := listenPort(t, "127.0.0.1", "127.0.0.2")
	for _, ln := range lns {
		ln.Close()
	}
	return port
}

func TestResolveHints(t *testing.T) {
	f := startFleet(t, fleetOpts{}, "127.0.0.1")
	code, _, stderr := pinprobe(t, "-q", "-n", "4", "--resolve", fmt.Sprintf("app.test:%d:127.0.0.1", f.port+1),
		"--resolve", fmt.Sprintf("app.test:%d:127.0.0.1", f.port), f.url())
	if code != exitOK || strings.Contains(stderr, "warning") {
		t.Errorf("an unused extra --resolve of the same host warns: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = pinprobe(t, "-q", "-n", "4", "--resolve", fmt.Sprintf("nx.invalid:%d:127.0.0.1", f.port+1),
		fmt.Sprintf("http://nx.invalid:%d/", f.port))
	if code != exitNoAddress {
		t.Errorf("exit %d; want 3", code)
	}
	for _, w := range []string{fmt.Sprintf("warning: --resolve nx.invalid:%d is not used: the URL's port is %d", f.port+1, f.port),
		"--dns-server ADDR:PORT", "--resolve HOST:PORT:ADDR"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}
