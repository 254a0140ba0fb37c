//go:build unix

package probe

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// helperEnv names the server a helper process loads, and helperClientEnv
// the request path it loads it through; set only in the helper processes
// TestClientErrorsAreNotTheBackends starts.
const (
	helperEnv       = "PINPROBE_TEST_HELPER_FDS"
	helperClientEnv = "PINPROBE_TEST_HELPER_CLIENT"
	// helperTimedEnv set: the helper sends for helperTimed instead of
	// sending 600 requests.
	helperTimedEnv = "PINPROBE_TEST_HELPER_TIMED"
)

// helperTimed is how long a timed helper sends.
const helperTimed = 500 * time.Millisecond

// helperFDs is the descriptor limit (soft and hard) the helper runs under.
const helperFDs = 64

// helperReport is what the helper process prints: its descriptor limit
// after lowering it, and its results by class.
type helperReport struct {
	Soft, Hard uint64
	OK         int               // status 200, no error
	Classes    map[string]int    // failures by class
	Errors     map[string]string // one error text per class
}

// TestHelperProcess is the helper process of
// TestClientErrorsAreNotTheBackends, not a test of its own: it lowers its
// own RLIMIT_NOFILE to helperFDs, soft and hard (Go raised the soft limit
// to the hard one at start, so the hard limit must come down too), loads
// the server named by $PINPROBE_TEST_HELPER_FDS with one fresh connection
// per request, 200 at a time, and prints a helperReport.
func TestHelperProcess(t *testing.T) {
	addr := os.Getenv(helperEnv)
	if addr == "" {
		return // run as part of the suite: nothing to do
	}
	lim := syscall.Rlimit{Cur: helperFDs, Max: helperFDs}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("setrlimit: %v", err)
	}
	var rep helperReport
	var err error
	if rep.Soft, rep.Hard, err = DescriptorLimit(); err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort(addr)
	ep := endpoints(t, hostURL("http", ap.Port()), ap.Addr())[0]
	o := Options{Max: true, Concurrency: 200, Requests: 600, Client: ClientKind(os.Getenv(helperClientEnv)),
		ConnOptions: ConnOptions{NewConn: true, Timeout: 10 * time.Second}}
	if os.Getenv(helperTimedEnv) != "" {
		o.Requests, o.Duration = 0, helperTimed
	}
	rep.Classes, rep.Errors = map[string]int{}, map[string]string{}
	for _, r := range attack(t, []*Endpoint{ep}, o, time.Minute) {
		if r.Err == nil && r.Status == http.StatusOK {
			rep.OK++
			continue
		}
		rep.Classes[string(r.Class)]++
		if r.Err != nil {
			rep.Errors[string(r.Class)] = r.Err.Error()
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		t.Fatal(err)
	}
}

// TestClientErrorsAreNotTheBackends runs a helper process out of file
// descriptors against a healthy server: the dials it cannot make are class
// client, nothing is misclassified as other or network_unreachable, and
// every other request reached the server and succeeded; on both request
// paths.
func TestClientErrorsAreNotTheBackends(t *testing.T) {
	eachClient(t, testClientErrorsAreNotTheBackends)
}

func testClientErrorsAreNotTheBackends(t *testing.T, client ClientKind) {
	var served atomic.Int64
	port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Write([]byte("ok\n"))
	}), nil, testserver.Lo4a)
	rep := runHelper(t, port, client, false)
	t.Logf("helper (descriptors %d/%d): %d ok, failures %v, e.g. %v", rep.Soft, rep.Hard, rep.OK, rep.Classes, rep.Errors)
	if rep.Soft != helperFDs || rep.Hard != helperFDs {
		t.Errorf("DescriptorLimit in the helper = %d, %d; want %d, %d", rep.Soft, rep.Hard, helperFDs, helperFDs)
	}
	if rep.Classes[string(ClassClient)] == 0 {
		t.Errorf("no client errors with %d descriptors for 200 connections at once", helperFDs)
	}
	for class, n := range rep.Classes {
		if class != string(ClassClient) {
			t.Errorf("%d failures of class %s (%s); want only class client", n, class, rep.Errors[class])
		}
	}
	if rep.OK == 0 || int64(rep.OK) != served.Load() || rep.OK+rep.Classes[string(ClassClient)] != 600 {
		t.Errorf("helper: %d ok + %d client errors, server served %d; want the ok ones served, 600 in all", rep.OK, rep.Classes[string(ClassClient)], served.Load())
	}
}

// TestClientErrorsDoNotSpin: a closed-model worker that could not send
// (out of descriptors) waits clientPause before its next try instead of
// failing as fast as socket() can: in helperTimed, 200 workers make at
// most about 200 × helperTimed/clientPause attempts that fail (without the
// pause, hundreds of thousands), and the server still gets requests.
func TestClientErrorsDoNotSpin(t *testing.T) {
	eachClient(t, func(t *testing.T, client ClientKind) {
		port := testserver.ServeSamePort(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("ok\n"))
		}), nil, testserver.Lo4a)
		rep := runHelper(t, port, client, true)
		n := rep.Classes[string(ClassClient)]
		most := 200 * (int(helperTimed/clientPause) + 1)
		t.Logf("%s: %d ok, %d client errors in %s (at most %d)", client, rep.OK, n, helperTimed, most)
		if n == 0 || n > most {
			t.Errorf("%d client errors in %s; want some, at most %d", n, helperTimed, most)
		}
		if rep.OK == 0 {
			t.Errorf("no request went out")
		}
	})
}

// runHelper runs TestHelperProcess against the server on port and returns
// its report.
func runHelper(t *testing.T, port uint16, client ClientKind, timed bool) helperReport {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+netip.AddrPortFrom(testserver.Lo4a, port).String(), helperClientEnv+"="+string(client))
	if timed {
		cmd.Env = append(cmd.Env, helperTimedEnv+"=1")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	var rep helperReport
	decodeErr := json.NewDecoder(stdout).Decode(&rep)
	waitErr := cmd.Wait()
	if decodeErr != nil || waitErr != nil {
		t.Fatalf("helper: %v, %v; stderr:\n%s", decodeErr, waitErr, stderr.String())
	}
	return rep
}

// TestDescriptorLimit reads this process's limit: Go raised the soft limit
// to the hard one at start.
func TestDescriptorLimit(t *testing.T) {
	soft, hard, err := DescriptorLimit()
	if err != nil || soft == 0 || soft > hard {
		t.Errorf("DescriptorLimit() = %d, %d, %v; want 0 < soft <= hard", soft, hard, err)
	}
}
