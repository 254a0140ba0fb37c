package main

// Targets files: --targets FILE, its errors, and a run over several URLs.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestParseTargetsErrors: a malformed targets file is a usage error naming
// the file, the line and what is wrong.
func TestParseTargetsErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file string
		want       []string
	}{
		{"empty", "# only a comment\n\n", []string{"t.txt", "no target"}},
		{"bad url", "GET ftp://x/\n", []string{"t.txt:1", "ftp"}},
		{"three words", "\n\nGET http://a.test/ extra\n", []string{"t.txt:3", "[METHOD] URL"}},
		{"bad method", "G(T http://a.test/\n", []string{"t.txt:1", "not an HTTP method"}},
		{"bad header", "GET http://a.test/\nNoColon\n", []string{"t.txt:2", "Name: value"}},
		{"content-length header", "POST http://a.test/\nContent-Length: 5\n", []string{"t.txt:2", "Content-Length"}},
		{"missing body", "POST http://a.test/\n@nothere.json\n", []string{"t.txt:2", "nothere.json"}},
		{"two bodies", "POST http://a.test/\n@b.json\n@b.json\n", []string{"t.txt:3", "second body"}},
		{"empty body path", "POST http://a.test/\n@\n", []string{"t.txt:2", "@FILE"}},
	}
	if err := os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.txt")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := pinprobe(t, "--targets", path)
			if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line", code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q; want it to name %q", stderr, w)
				}
			}
		})
	}
}

// TestTargetsErrorsShowNoSecret: an error quotes the targets file's line as
// written, ${NAME} unexpanded and a header's value REDACTED: a header line
// misplaced after a blank line (or before any target) is said to be one.
func TestTargetsErrorsShowNoSecret(t *testing.T) {
	t.Setenv("PINPROBE_TEST_TOKEN", "s3cr3t-from-env")
	dir := t.TempDir()
	for _, tt := range []struct {
		name, file string
		want       []string
	}{
		{"header after a blank line", "GET http://a.test/\n\nAuthorization: Bearer ${PINPROBE_TEST_TOKEN}\n",
			[]string{"t.txt:3", `header line "Authorization: REDACTED"`, "blank line"}},
		{"literal header after a blank line", "GET http://a.test/\n\nAuthorization: Bearer s3cr3t-literal\n",
			[]string{"t.txt:3", `"Authorization: REDACTED"`}},
		{"header before any target", "X-Api-Key:s3cr3t-literal\nGET http://a.test/\n",
			[]string{"t.txt:1", `"X-Api-Key: REDACTED"`, "before the first target"}},
		{"three words", "GET http://a.test/${PINPROBE_TEST_TOKEN} extra\n", []string{"t.txt:1", "${PINPROBE_TEST_TOKEN}", "[METHOD] URL"}},
		{"bad URL", "GET http://a.test:99999/${PINPROBE_TEST_TOKEN}\n", []string{"t.txt:1", "${PINPROBE_TEST_TOKEN}", "99999"}},
		{"bad header name", "GET http://a.test/\nX(${PINPROBE_TEST_TOKEN}): v\n", []string{"t.txt:2", "${PINPROBE_TEST_TOKEN}"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.txt")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := pinprobe(t, "--targets", path)
			if code != exitUsage || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line", code, stderr)
			}
			if strings.Contains(stderr, "s3cr3t") {
				t.Errorf("stderr %q shows the secret", stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q; want it to name %q", stderr, w)
				}
			}
		})
	}
}

// TestTargetsFile probes two URLs of one host from a targets file, with a
// method, headers and a body per target and defaults from the flags: the
// server sees each target's own request, the rate is split over all four
// endpoints, and the report labels rows by URL and address.
func TestTargetsFile(t *testing.T) {
	t.Parallel()
	type seen struct{ method, tenant, trace, body string }
	var mu sync.Mutex
	got := map[string]map[seen]int{} // path -> request shape -> count
	// record notes the shape of every request; 127.0.0.2 fails /api/sign.
	record := func(failSign bool) testserver.Policy {
		return func(n int64, r *http.Request) testserver.Answer {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			if got[r.URL.Path] == nil {
				got[r.URL.Path] = map[seen]int{}
			}
			got[r.URL.Path][seen{r.Method, r.Header.Get("X-Tenant"), r.Header.Get("X-Trace"), string(b)}]++
			mu.Unlock()
			if failSign && r.URL.Path == "/api/sign" {
				return testserver.Answer{Status: http.StatusBadGateway}
			}
			return testserver.Answer{Status: http.StatusOK}
		}
	}
	f := testserver.StartFleet(t, testserver.FleetOptions{
		Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: record(true)},
		Each:     record(false),
	}, testserver.Lo4a, testserver.Lo4b)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sign.json"), []byte(`{"doc":42}`), 0o644); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(f.URL(), "/") // http://app.test:PORT
	targets := "# the sign-in page\n" + base + "/login\nX-Tenant: acme\n\n" +
		"  # signing, with its own body and tenant\nPOST " + base + "/api/sign\nX-Tenant: beta\n@sign.json\n"
	path := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(path, []byte(targets), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, _ := probeReport(t, "--targets", path, "-H", "X-Trace: t1", "-H", "X-Tenant: default", "--resolve", f.Resolve(), "--rate", "800", "-n", "400")
	checkFleet(t, f, rep)
	want := map[string]seen{"/login": {"GET", "acme", "t1", ""}, "/api/sign": {"POST", "beta", "t1", `{"doc":42}`}}
	mu.Lock() // not held over the next run, whose requests take it too
	for p, w := range want {
		if len(got[p]) != 1 || got[p][w] == 0 {
			t.Errorf("%s: the server saw %v; want only %+v", p, got[p], w)
		}
	}
	mu.Unlock()
	if len(rep.Endpoints) != 4 {
		t.Fatalf("%d endpoints; want 4 (2 URLs × 2 addresses)", len(rep.Endpoints))
	}
	for _, e := range rep.Endpoints {
		if e.Requests < 80 || e.Requests > 120 {
			t.Errorf("%s %s: %d requests; want about 100 (400 split over 4)", e.Target, e.Address, e.Requests)
		}
	}
	checkVerdict(t, rep, "concentrated", "127.0.0.2")
	if s := rep.Verdict.Suspects; len(s) != 1 || !strings.HasSuffix(s[0].Target, "/api/sign") {
		t.Errorf("suspects %+v; want 127.0.0.2 on /api/sign only", s)
	}
	// The text report labels the per-endpoint sections by URL.
	code, text, _ := pinprobe(t, "-q", "--targets", path, "--resolve", f.Resolve(), "--rate", "400", "-n", "40")
	if code != exitOK {
		t.Fatalf("text run: exit %d", code)
	}
	for _, w := range []string{"BY ENDPOINT  " + base + "/login", "BY ENDPOINT  " + base + "/api/sign", " " + base + "/api/sign\n"} {
		if !strings.Contains(text, w) {
			t.Errorf("text report lacks %q:\n%s", w, text)
		}
	}
}

// TestParseTargetsLists: a "[METHOD] URL" line starts a target even without
// a blank line before it, so a plain list of URLs is a targets file (it
// was once read as one target with headers named "http"), while a header
// whose value is a URL stays a header.
func TestParseTargetsLists(t *testing.T) {
	file := "http://a.test/1\nhttps://a.test/2\nPOST http://a.test/3\nReferer: https://b.test/\nX-Next:https://c.test/\n" +
		"get http://a.test/4\n\n\nhttp://a.test/5\n"
	specs, err := parseTargets(context.Background(), "t.txt", []byte(file), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range specs {
		got = append(got, fmt.Sprintf("%s %s %v", s.method, s.url, s.header))
	}
	want := []string{
		" http://a.test/1 []",
		" https://a.test/2 []",
		"POST http://a.test/3 [[Referer https://b.test/] [X-Next https://c.test/]]",
		"GET http://a.test/4 []",
		" http://a.test/5 []",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("targets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
