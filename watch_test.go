package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
	"golang.org/x/crypto/bcrypt"
)

// lockedBuffer is a stderr written by the watch and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runningWatch is a watch started by startWatch.
type runningWatch struct {
	metrics string // http://ADDR/metrics
	stderr  *lockedBuffer
	stop    func() int // cancels it (as SIGTERM does) and returns its exit code
}

var metricsLine = regexp.MustCompile(`metrics on (https?://\S+/metrics)`)

// startWatch runs `pinprobe watch args...` in this process until stop, or
// the test's end; it returns once the watch serves its metrics.
func startWatch(t *testing.T, args ...string) *runningWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	w := &runningWatch{stderr: &lockedBuffer{}}
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"watch"}, args...), io.Discard, w.stderr) }()
	var once sync.Once
	code := -1
	w.stop = func() int {
		once.Do(func() { cancel(); code = <-done })
		return code
	}
	t.Cleanup(func() { w.stop() })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := metricsLine.FindStringSubmatch(w.stderr.String()); m != nil {
			w.metrics = m[1]
			return w
		}
		select {
		case c := <-done:
			t.Fatalf("watch exited %d before serving: %s", c, w.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("watch never said where its metrics are: %s", w.stderr.String())
	return nil
}

// scrape gets the watch's metrics, as OpenMetrics when om.
func (w *runningWatch) scrape(t *testing.T, om bool) string {
	t.Helper()
	req, _ := http.NewRequest("GET", w.metrics, nil)
	if om {
		req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	}
	_, _, body := do(t, req)
	return body
}

// waitFor polls cond every 50ms until it holds or limit passes, and says
// how long it took.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < limit {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v", what, limit)
	return 0
}

// switchable answers 200 until fail is set, then 502.
func switchable(fail *atomic.Bool) testserver.Policy {
	return func(n int64, r *http.Request) testserver.Answer {
		if fail.Load() {
			return testserver.Answer{Status: http.StatusBadGateway}
		}
		return testserver.Answer{Status: http.StatusOK}
	}
}

// TestWatchFindsAFaultMidRun: a watch over a loopback fleet names the
// address that starts answering 502 mid-run in an event (JSON lines, with
// request IDs the server saw) and in the suspect gauge, with exemplars on
// the failures in OpenMetrics, ends the suspect when the fault stops, and
// exits 0 when stopped. promtool accepts the exposition.
func TestWatchFindsAFaultMidRun(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{testserver.Lo4b: switchable(&fail)}},
		testserver.Lo4a, testserver.Lo4b, testserver.Lo4c)
	w := startWatch(t, "--listen", "127.0.0.1:0", "-r", "30", "--events", "json", "--resolve", f.Resolve(), f.URL())
	waitFor(t, 5*time.Second, "first requests counted", func() bool {
		return strings.Contains(w.scrape(t, false), `pinprobe_requests_total{address="127.0.0.2"`)
	})
	fail.Store(true)
	suspect := regexp.MustCompile(`pinprobe_suspect\{address="127.0.0.2",backend="",family="ipv4",host="app.test",scope="address"\} 1`)
	d := waitFor(t, 5*time.Second, "the suspect gauge of 127.0.0.2", func() bool { return suspect.MatchString(w.scrape(t, false)) })
	t.Logf("suspect gauge up %v after the fault started", d.Round(time.Millisecond))
	om := w.scrape(t, true)
	if !regexp.MustCompile(`pinprobe_request_failures_total\{[^}]*address="127.0.0.2"[^}]*\} [\d.]+ # \{request_id="[^"]+"\}`).MatchString(om) {
		t.Errorf("no exemplar with a request ID on the failures of 127.0.0.2:\n%s", grepLines(om, "failures_total"))
	}
	checkPromtool(t, w.scrape(t, false))
	fail.Store(false)
	ended := regexp.MustCompile(`pinprobe_suspect\{address="127.0.0.2",backend="",family="ipv4",host="app.test",scope="address"\} 0`)
	waitFor(t, 5*time.Second, "the suspect's end", func() bool { return ended.MatchString(w.scrape(t, false)) })
	if code := w.stop(); code != exitOK {
		t.Errorf("stopped watch: exit %d; want 0", code)
	}
	var start, end bool
	sc := bufio.NewScanner(strings.NewReader(w.stderr.String()))
	for sc.Scan() {
		var ev struct {
			Event, Scope, Address string
			RequestIDs            []string `json:"request_ids"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Scope != "address" || ev.Address != "127.0.0.2" {
			t.Errorf("an event of another scope: %s", sc.Text())
			continue
		}
		switch ev.Event {
		case "suspect_start":
			start = true
			b := f.Backend(t, testserver.Lo4b)
			for _, id := range ev.RequestIDs {
				if !b.SawID(id) {
					t.Errorf("event names request %s, which 127.0.0.2 never saw", id)
				}
			}
			if len(ev.RequestIDs) == 0 {
				t.Errorf("start event without request IDs: %s", sc.Text())
			}
		case "suspect_end":
			end = true
		}
	}
	if !start || !end {
		t.Errorf("events: start %v, end %v; want both:\n%s", start, end, w.stderr.String())
	}
}

// grepLines are the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// checkPromtool runs `promtool check metrics` on an exposition, where
// promtool is installed (.ci/run installs it).
func checkPromtool(t *testing.T, exposition string) {
	t.Helper()
	bin := promtoolBinary(t)
	if bin == "" {
		return
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// promtoolBinary finds promtool; "" (the check skipped, said in the log)
// when it is missing outside CI.
func promtoolBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("promtool is missing: .ci/run installs prometheus")
	}
	t.Log("promtool is missing: not checking the exposition")
	return ""
}

// TestWatchRetiresAVanishedAddress: an address DNS adds gets series within
// one --re-resolve; one DNS drops loses them after --retire-after.
func TestWatchRetiresAVanishedAddress(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a, testserver.Lo4b, testserver.Lo4c)
	d := testserver.StartDNS(t, map[string][]netip.Addr{f.Host(): {testserver.Lo4a, testserver.Lo4b}})
	w := startWatch(t, "--listen", "127.0.0.1:0", "-r", "20", "--dns-server", d.Addr().String(),
		"--re-resolve", "1s", "--retire-after", "1s", f.URL())
	has := func(addr string) func() bool {
		return func() bool { return strings.Contains(w.scrape(t, false), `address="`+addr+`"`) }
	}
	waitFor(t, 5*time.Second, "series of 127.0.0.2", has("127.0.0.2"))
	d.Set(f.Host(), testserver.Lo4a, testserver.Lo4c)
	added := waitFor(t, 3*time.Second, "series of the added 127.0.0.3", func() bool {
		return strings.Contains(w.scrape(t, false), `pinprobe_requests_total{address="127.0.0.3"`)
	})
	gone := waitFor(t, 5*time.Second, "127.0.0.2's series retired", func() bool { return !has("127.0.0.2")() })
	t.Logf("added address counted after %v; vanished one retired %v later", added.Round(time.Millisecond), gone.Round(time.Millisecond))
	if m := w.scrape(t, false); !strings.Contains(m, `pinprobe_dns_changes_total{host="app.test"} 1`) {
		t.Errorf("want one DNS change counted:\n%s", grepLines(m, "pinprobe_dns"))
	}
	if code := w.stop(); code != exitOK {
		t.Errorf("stopped watch: exit %d; want 0", code)
	}
}

// TestWatchUsage: a probe run's flags, a bad value and a listener that
// cannot be opened are each one line and exit 2.
func TestWatchUsage(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "100", "http://a.test/"}, "watch: --requests is a flag of a probe run"},
		{[]string{"--until-verdict", "http://a.test/"}, "watch: --until-verdict is a flag of a probe run"},
		{[]string{"--format", "json", "http://a.test/"}, "watch: --format is a flag of a probe run"},
		{[]string{"--brief", "http://a.test/"}, "watch: --brief is a flag of a probe run"},
		{[]string{"-o", file, "http://a.test/"}, "watch: -o " + file + ": "},
		{[]string{"--window", "0", "http://a.test/"}, "watch: --window 0s: must be 1s to 24h"},
		{[]string{"--keep", "0", "http://a.test/"}, "watch: --keep 0: must be at least 1"},
		{[]string{"--keep", "3", "http://a.test/"}, "watch: --keep keeps the windows' reports of -o DIR"},
		{[]string{"--max-failure-rate", "1%", "http://a.test/"}, "watch: --max-failure-rate is a flag of a probe run"},
		{[]string{"-r", "max", "http://a.test/"}, "watch: --rate max"},
		{[]string{"--events", "xml", "http://a.test/"}, `watch: --events "xml"`},
		{[]string{}, "watch: no URL given"},
		{[]string{"--listen", busy.Addr().String(), "--resolve", "a.test:80:127.0.0.1", "http://a.test/"}, "watch: --listen " + busy.Addr().String() + ": "},
	} {
		refused(t, tc.want, append([]string{"watch"}, tc.args...)...)
	}
}

// TestWatchKeepsSecretsOutOfLabels: the URL's password and token and a
// header's credential are in no label value nor exemplar.
func TestWatchKeepsSecretsOutOfLabels(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{Each: testserver.Status(502)}, testserver.Lo4a, testserver.Lo4b)
	u := strings.Replace(f.URL(), "://", "://user:pa55word@", 1) + "?token=t0ken"
	w := startWatch(t, "--listen", "127.0.0.1:0", "-r", "20", "-H", "Authorization: Bearer s3cr3t", "--resolve", f.Resolve(), u)
	var m string
	waitFor(t, 5*time.Second, "failures counted", func() bool {
		m = w.scrape(t, true)
		return strings.Contains(m, "pinprobe_request_failures_total{")
	})
	for _, s := range []string{"pa55word", "t0ken", "s3cr3t"} {
		if strings.Contains(m, s) {
			t.Errorf("the metrics carry the secret %q:\n%s", s, grepLines(m, s))
		}
	}
}

// TestWatchWithPrometheus: a real Prometheus scrapes a watch every second;
// an address of the fleet starts answering 502; Prometheus's API shows its
// suspect gauge at 1 within the stated delay (docs/watch.md: seconds at
// this rate, plus a scrape), the alert of examples/watch/alerts.yml firing
// on it, every query of examples/watch/dashboard.json returning series, the
// failure's exemplar, and the gauge back at 0 once the fault stops.
func TestWatchWithPrometheus(t *testing.T) {
	t.Parallel()
	testserver.PrometheusBinary(t)
	var fail atomic.Bool
	// Every answer names its instance, for the dashboard's panel of them.
	served := func(p testserver.Policy) testserver.Policy {
		return func(n int64, r *http.Request) testserver.Answer {
			a := p(n, r)
			a.Header = map[string]string{"X-Served-By": "web-1"}
			return a
		}
	}
	var ok atomic.Bool
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4a: served(switchable(&ok)), testserver.Lo4b: served(switchable(&fail)), testserver.Lo4c: served(switchable(&ok))}},
		testserver.Lo4a, testserver.Lo4b, testserver.Lo4c)
	w := startWatch(t, "--listen", "127.0.0.1:0", "-r", "30", "--group-by", "X-Served-By", "--resolve", f.Resolve(), f.URL())
	target := strings.TrimSuffix(strings.TrimPrefix(w.metrics, "http://"), "/metrics")
	api := netip.AddrPortFrom(testserver.Lo4a, testserver.FreePort(t, testserver.Lo4a))
	rules, err := filepath.Abs(filepath.Join("examples", "watch", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	prom := testserver.Prometheus(t, api, []string{rules}, target)
	waitFor(t, 15*time.Second, "Prometheus scraping the watch", func() bool {
		_, ok := promQuery(api, `pinprobe_requests_total{address="127.0.0.2"}`)
		return ok
	})
	fail.Store(true)
	const gauge = `pinprobe_suspect{scope="address",address="127.0.0.2"}`
	// docs/watch.md: the seed's fault takes 8 of the address's requests (0.8 s at
	// 10 a second here), then a scrape (1 s) and a query.
	up := waitFor(t, 5*time.Second, "the suspect gauge at 1 in Prometheus", func() bool {
		v, ok := promQuery(api, gauge)
		return ok && v == 1
	})
	t.Logf("suspect gauge at 1 in Prometheus %v after the fault started", up.Round(time.Millisecond))
	if v, ok := promQuery(api, `pinprobe_suspect{scope="address",address="127.0.0.1"}`); ok && v == 1 {
		t.Errorf("127.0.0.1 is a suspect too; want only 127.0.0.2")
	}
	// The rule evaluates every second: the alert fires on the gauge.
	waitFor(t, 5*time.Second, "PinprobeAddressFails firing for 127.0.0.2", func() bool {
		v, ok := promQuery(api, `ALERTS{alertname="PinprobeAddressFails",alertstate="firing",address="127.0.0.2"}`)
		return ok && v == 1
	})
	// Every panel of the dashboard has series, its host the fleet's (a rate
	// once its series has two scrapes).
	for _, expr := range dashboardQueries(t) {
		expr = strings.NewReplacer("$host", f.Host(), "$__rate_interval", "1m").Replace(expr)
		var v float64
		waitFor(t, 5*time.Second, "series of the dashboard's "+expr, func() bool {
			var ok bool
			v, ok = promQuery(api, expr)
			return ok
		})
		t.Logf("dashboard: %s → %.4g (first series)", expr, v)
	}
	waitFor(t, 5*time.Second, "an exemplar with a request ID", func() bool {
		now := time.Now()
		resp, err := http.Get("http://" + api.String() + "/api/v1/query_exemplars?query=" + url.QueryEscape(`pinprobe_request_failures_total`) +
			"&start=" + strconv.FormatInt(now.Add(-time.Minute).Unix(), 10) + "&end=" + strconv.FormatInt(now.Unix()+1, 10))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `"request_id":"pinprobe-`)
	})
	if _, ok := promQuery(api, `histogram_count(pinprobe_request_duration_seconds{address="127.0.0.1"})`); !ok {
		t.Errorf("no native histogram of the duration in Prometheus")
	}
	fail.Store(false)
	down := waitFor(t, 10*time.Second, "the suspect gauge back at 0 in Prometheus", func() bool {
		v, ok := promQuery(api, gauge)
		return ok && v == 0
	})
	t.Logf("back at 0 %v after the fault stopped", down.Round(time.Millisecond))
	if err := prom.Stop(); err != nil {
		t.Logf("prometheus: %v", err)
	}
}

// TestAlertRules: the alerting rules of examples/watch load (promtool check
// rules) and do what their unit tests say on synthetic series (promtool test
// rules examples/watch/alerts_test.yml): each suspect's alert with its
// scope and what to run next, a family appearing in DNS (not at a watch's
// start), the watch down, idle or absent.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	bin := promtoolBinary(t)
	if bin == "" {
		t.Skip("promtool is missing")
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = filepath.Join("examples", "watch")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestWatchProtectedListener: --web-config protects the listener as an
// exporter's web configuration says (TLS and basic auth, the exporter
// toolkit's own reading of it). A scrape with a wrong password gets 401 and
// no metric; a real Prometheus scraping through TLS with the credentials
// gets the series. A file that is not such a configuration is a usage
// error.
func TestWatchProtectedListener(t *testing.T) {
	t.Parallel()
	testserver.PrometheusBinary(t)
	dir := t.TempDir()
	pki := testserver.NewPKI(t)
	leaf := pki.Leaf("127.0.0.1")
	var certPEM []byte
	for _, der := range leaf.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leaf.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("right-horse"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"cert.pem": string(certPEM), "key.pem": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})),
		"web.yml": "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  prom: " + string(hash) + "\n",
		"bad.yml": "tls_server_config:\n  cert_file: missing.pem\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := pinprobe(t, "watch", "--web-config", filepath.Join(dir, "bad.yml"), "http://127.0.0.1:1/"); code != exitUsage || !strings.Contains(stderr, "--web-config") {
		t.Errorf("a web config naming a missing key: exit %d, %q; want a usage error naming --web-config", code, stderr)
	}
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	w := startWatch(t, "--listen", "127.0.0.1:0", "--web-config", filepath.Join(dir, "web.yml"), "-r", "20", "--resolve", f.Resolve(), f.URL())
	if !strings.HasPrefix(w.metrics, "https://") {
		t.Fatalf("the watch says its metrics are at %s; want https", w.metrics)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool}}}
	for _, tt := range []struct {
		user, password string
		code           int
	}{{"prom", "wrong", http.StatusUnauthorized}, {"", "", http.StatusUnauthorized}, {"prom", "right-horse", http.StatusOK}} {
		// The metrics, and the live page with the window's report.
		for _, page := range []struct{ url, mark string }{{w.metrics, "pinprobe_"}, {strings.TrimSuffix(w.metrics, "metrics") + "?format=json", `"totals"`}} {
			req, _ := http.NewRequest("GET", page.url, nil)
			if tt.user != "" {
				req.SetBasicAuth(tt.user, tt.password)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := strings.Contains(string(body), page.mark); resp.StatusCode != tt.code || (tt.code != http.StatusOK) == got {
				t.Errorf("%s, user %q password %q: %d, %q in the body %v; want %d", page.url, tt.user, tt.password, resp.StatusCode, page.mark, got, tt.code)
			}
		}
	}
	// A real Prometheus, through TLS with the credentials.
	api := netip.AddrPortFrom(testserver.Lo4a, testserver.FreePort(t, testserver.Lo4a))
	target := strings.TrimSuffix(strings.TrimPrefix(w.metrics, "https://"), "/metrics")
	testserver.PrometheusScrape(t, api, fmt.Sprintf(
		"scheme: https\n    tls_config:\n      ca_file: %q\n    basic_auth:\n      username: prom\n      password: right-horse", pki.CAFile), target)
	waitFor(t, 15*time.Second, "Prometheus scraping the protected watch", func() bool {
		_, ok := promQuery(api, `up{job="pinprobe"} == 1 and on() pinprobe_requests_total`)
		return ok
	})
}

// promQuery asks the Prometheus whose API is at api for q now, and returns
// the value of its first series; false when q has none.
func promQuery(api netip.AddrPort, q string) (float64, bool) {
	resp, err := http.Get("http://" + api.String() + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&out) != nil || len(out.Data.Result) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(fmt.Sprint(out.Data.Result[0].Value[1]), 64)
	return v, err == nil
}

// dashboardQueries are the queries of examples/watch/dashboard.json's
// panels and annotations.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("examples", "watch", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Annotations struct {
			List []struct {
				Expr string `json:"expr"`
			} `json:"list"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	for _, a := range d.Annotations.List {
		out = append(out, a.Expr)
	}
	if len(out) < 8 {
		t.Fatalf("dashboard.json has %d queries; want every panel's", len(out))
	}
	return out
}
