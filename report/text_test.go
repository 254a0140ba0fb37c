package report

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"pinprobe/probe"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenReport builds, from synthetic results, an interrupted run over two
// targets: sign.example.com, whose IPv6 address answers Azure Application
// Gateway 502 pages most of the time, and api.example.com, whose IPv4
// address resets and refuses some connections, whose endpoints dropped
// requests, and whose IPv6 address left DNS mid-run; a third target did not
// resolve. Results carry what the forensics need: request IDs, local and
// remote ports, new or reused connections, phases, and evidence for the
// first three failures and first success of each endpoint. Everything is
// fixed, so the rendering is byte-stable.
func goldenReport(t *testing.T) *Report {
	t.Helper()
	sign := mustTarget(t, "https://sign.example.com/")
	api := mustTarget(t, "http://api.example.com:8080/health")
	eps := []*probe.Endpoint{
		{ID: 0, Target: sign, Addr: netip.MustParseAddr("203.0.113.7")},
		{ID: 1, Target: sign, Addr: netip.MustParseAddr("2001:db8::7")},
		{ID: 2, Target: api, Addr: netip.MustParseAddr("198.51.100.20")},
		{ID: 3, Target: api, Addr: netip.MustParseAddr("2001:db8::20")},
	}
	fail, err := ParseFailStatus("5xx")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 6, 16, 20, 43, 0, 0, time.UTC)
	agg := NewAggregator(eps, fail)
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	clientV4, clientV6 := netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::100")
	nextPort := []uint16{50100, 50200, 50300, 50400} // each endpoint's next local port
	port := make([]uint16, len(eps))                 // its open connection's, 0 for none
	failSamples, okSample := make([]int, len(eps)), make([]bool, len(eps))
	azurePage := []byte("<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>Microsoft-Azure-Application-Gateway/v2</center>\n</body>\n</html>\n")
	add := func(ep, i int, status int, class probe.ErrorClass, latency time.Duration) {
		r := probe.Result{Endpoint: ep, Start: start.Add(time.Duration(i) * 250 * time.Millisecond), Latency: latency, Status: status,
			RequestID: fmt.Sprintf("pinprobe-0123abcd-%d-%d", ep, i+1)}
		e := eps[ep]
		remote := netip.AddrPortFrom(e.Addr, e.Target.Port())
		client := clientV4
		if e.Addr.Is6() {
			client = clientV6
		}
		if ep == 1 && i == 20 {
			port[ep] = 0 // the gateway closed the idle connection
		}
		switch {
		case class == probe.ClassConnectRefused:
			r.Err = fmt.Errorf("dial tcp %s: connect: connection refused", remote)
			port[ep] = 0
		case port[ep] == 0:
			port[ep] = nextPort[ep]
			nextPort[ep]++
			r.Connect = ms(1.5)
			if e.Target.TLS() {
				r.TLS = ms(4.25)
			}
		default:
			r.Reused = true
		}
		if port[ep] != 0 {
			r.Local, r.Remote = netip.AddrPortFrom(client, port[ep]), remote
		}
		if class == probe.ClassReset {
			r.Err = fmt.Errorf("read tcp %s->%s: read: connection reset by peer", r.Local, remote)
			port[ep] = 0
		}
		var ev *probe.ResponseEvidence
		if class != probe.ClassNone {
			r.Class = class
			ev = &probe.ResponseEvidence{}
		} else {
			r.Bytes = 512
			r.TTFB = latency * 9 / 10
			proto, body := "HTTP/1.1", []byte(`{"status":"ok"}`)
			h := http.Header{"Content-Type": {"application/json"}, "Date": {"Tue, 16 Jun 2026 20:43:00 GMT"}}
			if e.Target.TLS() {
				proto, body = "HTTP/2.0", []byte("<html><body><h1>Sign here</h1></body></html>\n")
				h = http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Date": {"Tue, 16 Jun 2026 20:43:00 GMT"},
					"Server":     {"Microsoft-Azure-Application-Gateway/v2"},
					"Set-Cookie": {"ApplicationGatewayAffinity=5f1c0ffee; Path=/"}}
			}
			if status == 502 {
				body = azurePage
				h = http.Header{"Content-Type": {"text/html"}, "Content-Length": {"176"}, "Date": {"Tue, 16 Jun 2026 20:43:00 GMT"},
					"Server": {"Microsoft-Azure-Application-Gateway/v2"}}
				r.Server, r.BodyHash = h.Get("Server"), 0x8aa9b7e56a3ec6e6
				if i == 1 {
					r.Exemplar = body
				}
			}
			ev = &probe.ResponseEvidence{Proto: proto, Header: h, Body: body}
		}
		if failed := agg.Failed(&r); failed && failSamples[ep] < 3 {
			failSamples[ep]++
			r.Evidence = ev
		} else if !failed && !okSample[ep] {
			okSample[ep] = true
			r.Evidence = ev
		}
		agg.Add(r)
	}
	for i := range 40 {
		add(0, i, 200, "", ms(20+0.25*float64(i)))
		status := 502
		if i%4 == 0 {
			status = 200
		}
		add(1, i, status, "", ms(3+0.5*float64(i)))
	}
	for i := range 25 {
		switch {
		case i%8 == 3:
			add(2, i, 0, probe.ClassReset, ms(1.5+float64(i)/10))
		case i%8 == 6:
			add(2, i, 0, probe.ClassConnectRefused, ms(0.2+float64(i)/100))
		default:
			add(2, i, 200, "", ms(8+float64(i)))
		}
		add(3, i, 200, "", ms(9+float64(i)*2))
	}
	agg.Add(probe.Result{Endpoint: 2, Dropped: 7})
	agg.Add(probe.Result{Endpoint: 3, Dropped: 2})
	left := start.Add(6500 * time.Millisecond) // 2001:db8::20 vanished from DNS after its last request
	agg.MarkRemoved(3, left)

	rep := &Report{
		Version:     "0.1.0",
		Command:     []string{"pinprobe", "--rate", "20", "-H", "Authorization: " + Redacted, sign.String(), api.String(), "https://gone.example.com/"},
		StartedAt:   Time{start},
		EndedAt:     Time{start.Add(12500 * time.Millisecond)},
		Interrupted: true,
		Plan:        Plan{Rate: 20, DurationS: 30, Concurrency: 10, Timeout: 10, HTTP: "auto", FailStatus: "5xx"},
		DNS: []DNS{
			{Host: "sign.example.com", Port: 443, Source: "system", Addresses: []string{"203.0.113.7", "2001:db8::7"}, Changes: []DNSChange{}},
			{Host: "api.example.com", Port: 8080, Source: "dns 127.0.0.1:53", Addresses: []string{"198.51.100.20"},
				Changes: []DNSChange{{At: Time{left}, Added: []string{}, Removed: []string{"2001:db8::20"}}}},
			{Host: "gone.example.com", Port: 443, Source: "system", Addresses: []string{},
				Error: "resolve gone.example.com (system): no such host", Changes: []DNSChange{}},
		},
	}
	return closeJudged(agg, rep)
}

func mustTarget(t *testing.T, raw string) *probe.Target {
	t.Helper()
	tg, err := probe.ParseTarget(raw)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestTextGolden renders the golden report at 80 and 120 columns: every
// line fits, and the output is what testdata holds.
func TestTextGolden(t *testing.T) {
	for _, width := range []int{80, 120} {
		t.Run(strconv.Itoa(width), func(t *testing.T) { checkTextGolden(t, width) })
	}
}

func checkTextGolden(t *testing.T, width int) {
	rep := goldenReport(t)
	var buf bytes.Buffer
	if err := Text(Options{Width: width})(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(buf.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("line %d is %d columns wide; want at most %d: %q", i+1, n, width, line)
		}
	}
	golden := filepath.Join("testdata", fmt.Sprintf("text-%d.golden", width))
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run TestTextGolden -update to create it)", err)
		return
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("text report differs from %s (rerun with -update if the change is intended)\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
	if bytes.Contains(buf.Bytes(), []byte("\x1b[")) {
		t.Errorf("Text without Color wrote ANSI escapes")
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestTextColor(t *testing.T) {
	rep := goldenReport(t)
	var plain, color bytes.Buffer
	if err := Text(Options{})(&plain, rep); err != nil {
		t.Fatal(err)
	}
	if err := Text(Options{Color: true})(&color, rep); err != nil {
		t.Fatal(err)
	}
	if got := ansi.ReplaceAllString(color.String(), ""); got != plain.String() {
		t.Errorf("Text(true) without its escapes differs from Text(false):\n%s\nvs\n%s", got, plain.String())
	}
	red := 0
	prevRed := false
	for _, line := range strings.Split(strings.TrimRight(color.String(), "\n"), "\n") {
		text := ansi.ReplaceAllString(line, "")
		isRed := strings.Contains(line, ansiRed)
		wasRed := prevRed
		prevRed = isRed
		switch {
		case wasRed && isRed && strings.HasPrefix(text, "    "):
			// A wrapped failing item stays red on its continuation lines.
			if !strings.HasPrefix(line, ansiRed) || !strings.HasSuffix(line, ansiReset) {
				t.Errorf("continuation of a failing item is not red from end to end: %q", line)
			}
		case strings.HasPrefix(text, " "+failMark):
			red++
			if !strings.HasPrefix(line, ansiRed) || !strings.HasSuffix(line, ansiReset) {
				t.Errorf("failing row is not red from end to end: %q", line)
			}
		case strings.HasPrefix(text, "INTERRUPTED"), strings.HasPrefix(text, "VERDICT CONCENTRATED"), strings.HasPrefix(text, "VERDICT SPREAD"):
			// The banner and a failing verdict are red too, on purpose.
			if !isRed {
				t.Errorf("line is not red: %q", line)
			}
		case isRed:
			t.Errorf("row without failures is red: %q", line)
		}
	}
	// The host that did not resolve; families ipv4 and ipv6; endpoints
	// 2001:db8::7 and 198.51.100.20 in the endpoint, phase and timeline
	// tables; three failure fingerprints; four failed samples.
	if red != 16 {
		t.Errorf("%d failing rows in red; want 16:\n%s", red, color.String())
	}
}

// failingWriter accepts n bytes, then fails every write.
type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

func TestRenderersReturnWriteErrors(t *testing.T) {
	rep := goldenReport(t)
	for _, format := range Formats {
		for _, n := range []int{0, 100, 1000} {
			render, err := ForFormat(format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := render(&failingWriter{n: n}, rep); !errors.Is(err, errDiskFull) {
				t.Errorf("%s renderer, writer failing after %d bytes: err = %v; want %v", format, n, err, errDiskFull)
			}
		}
	}
	if _, err := ForFormat("xml", Options{}); err == nil {
		t.Errorf("ForFormat(xml) = nil error; want one")
	}
}

// closeJudged closes agg over r and judges the report, as a run does.
func closeJudged(agg *Aggregator, r *Report) *Report {
	agg.Close(r)
	r.Verdict = Judge(r, TestAlpha)
	return r
}

// mergeJudged merges reports and judges the result, as pinprobe report does.
func mergeJudged(reports []*Report, names []string) (*Report, error) {
	m, err := Merge(reports, names)
	if err == nil {
		m.Verdict = Judge(m, TestAlpha)
	}
	return m, err
}
