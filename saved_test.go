package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// TestScaleOut is the scale-out recipe run locally: N pinprobe processes
// in parallel, each at R/N against one loopback server, then `pinprobe
// report` over their N JSON files. The merged counts equal the server's own,
// address by address.
func TestScaleOut(t *testing.T) {
	t.Parallel()
	bin := buildPinprobe(t)
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4b: testserver.Every(4, fx503),
	}}, testserver.Lo4a, testserver.Lo4b, testserver.Lo6)
	const n = 3
	dir := t.TempDir()
	files := make([]string, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	outs := make([][]byte, n)
	for i := range n {
		files[i] = filepath.Join(dir, "part-"+strconv.Itoa(i)+".json")
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			// What each pod of the Kubernetes Indexed Job runs (examples/k8s).
			cmd := exec.CommandContext(ctx, bin, "-q", "--rate", "200", "-n", "150", "--resolve", f.Resolve(),
				"--format", "json", "-o", files[i], f.URL())
			outs[i], errs[i] = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		checkSchemaFile(t, kindReport, files[i])
	}
	code, stdout, stderr := pinprobe(t, append([]string{"report", "--format", "json"}, files...)...)
	if code != exitOK {
		t.Fatalf("report: exit %d; stderr:\n%s", code, stderr)
	}
	rep := decodeReport(t, []byte(stdout))
	checkReport(t, rep)
	if rep.Totals.Requests != 3*150 {
		t.Errorf("merged totals: %d requests; want %d", rep.Totals.Requests, 3*150)
	}
	compareHits(t, f, rep)
	var raw struct {
		Inputs []struct {
			File     string `json:"file"`
			Requests int64  `json:"requests"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Inputs) != n {
		t.Errorf("the merged report names %d inputs; want %d", len(raw.Inputs), n)
	}
	checkVerdict(t, rep, "concentrated", "127.0.0.2")
}

// TestReportCommand: one saved report re-renders in every format (from a
// file and from standard input), the gate is judged at report time, and
// input that is not a pinprobe report is refused with its name and why.
func TestReportCommand(t *testing.T) {
	t.Parallel()
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4b: testserver.Every(5, fx503),
	}}, testserver.Lo4a, testserver.Lo4b)
	saved := filepath.Join(t.TempDir(), "run.json")
	if code, _, stderr := pinprobe(t, "-q", "--rate", "1000", "-n", "200", "--resolve", f.Resolve(), "-o", saved, f.URL()); code != exitOK {
		t.Fatalf("probe: exit %d\n%s", code, stderr)
	}
	for _, format := range []string{"text", "json", "markdown", "html"} {
		code, stdout, stderr := pinprobe(t, "report", "--format", format, saved)
		if code != exitOK || !strings.Contains(stdout, "127.0.0.2") {
			t.Errorf("report --format %s: exit %d, stderr %q; stdout lacks the failing address", format, code, stderr)
		}
	}
	data, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	checkSchema(t, kindReport, data)
	var out, errb bytes.Buffer
	if code := runWith(t.Context(), []string{"report", "--format", "json", "-"}, bytes.NewReader(data), &out, &errb); code != exitOK {
		t.Fatalf("report - : exit %d\n%s", code, errb.String())
	}
	decodeReport(t, out.Bytes())
	// The gate at report time: 127.0.0.2 fails 20%.
	if code, _, stderr := pinprobe(t, "report", "--max-failure-rate", "5%", saved); code != exitFail || !strings.Contains(stderr, "release gate FAILED") {
		t.Errorf("report with a breached gate: exit %d, stderr %q; want 1", code, stderr)
	}
	// Refusals name the file and the reason, and exit 2.
	dir := t.TempDir()
	write := func(name, content string) string { return writeIn(t, dir, name, []byte(content)) }
	broken := strings.Replace(string(data), `"ok": `, `"ok": 1`, 1)
	for _, tt := range []struct{ file, want string }{
		{write("notes.txt", "just some text\n"), "not a pinprobe JSON report"},
		{write("newer.json", `{"schema": "pinprobe.report/v2"}`), "pinprobe.report/v2"},
		{write("broken.json", broken), "broken.json"},
		{filepath.Join(dir, "missing.json"), "missing.json"},
	} {
		refused(t, tt.want, "report", tt.file)
	}
	if code, _, _ := pinprobe(t, "report"); code != exitUsage {
		t.Errorf("report without a file: exit %d; want 2", code)
	}
	// -o writes JSON: a name that promises HTML is refused before anything is written.
	html := filepath.Join(dir, "shared.html")
	if code, _, stderr := pinprobe(t, "report", "--format", "html", "-o", html, saved); code != exitUsage || !strings.Contains(stderr, "--format html >") {
		t.Errorf("report -o shared.html: exit %d, %q; want 2 and the way to get HTML", code, stderr)
	}
	if _, err := os.Stat(html); err == nil {
		t.Errorf("report -o shared.html wrote %s", html)
	}
}

// TestCompareCommand: before, ::1 answers 502 to everything; after the
// change ::1 is gone and 127.0.0.2 fails a quarter of its requests: a
// regression, exit 1 with --fail-on-regression.
func TestCompareCommand(t *testing.T) {
	t.Parallel()
	if !testserver.HasIPv6Loopback() {
		t.Skip("no IPv6 loopback here")
	}
	before := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo6: testserver.Status(502),
	}}, testserver.Lo4a, testserver.Lo4b, testserver.Lo6)
	dir := t.TempDir()
	b, a := filepath.Join(dir, "before.json"), filepath.Join(dir, "after.json")
	if code, _, stderr := pinprobe(t, "-q", "--rate", "1500", "-n", "600", "--resolve", before.Resolve(), "-o", b, before.URL()); code != exitOK {
		t.Fatalf("before: exit %d\n%s", code, stderr)
	}
	// The same URL after the change: IPv4 only, and 127.0.0.2 now failing.
	after := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{
		testserver.Lo4b: testserver.Every(4, fx503),
	}}, testserver.Lo4a, testserver.Lo4b)
	if code, _, stderr := pinprobe(t, "-q", "--rate", "1500", "-n", "400", "--resolve", after.Resolve(), "-o", a, after.URL()); code != exitOK {
		t.Fatalf("after: exit %d\n%s", code, stderr)
	}
	// Make AFTER's URL the same as BEFORE's, as a second run of the same
	// command would have it (the test servers' ports differ).
	sameURL(t, a, after.URL(), before.URL())

	code, stdout, stderr := pinprobe(t, "compare", b, a)
	if code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	for _, want := range []string{"REGRESSED", "127.0.0.2", "::1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("comparison lacks %q; first line %q", want, first)
		}
	}
	code, _, stderr = pinprobe(t, "compare", "--fail-on-regression", "--format", "json", "-o", filepath.Join(dir, "c.json"), b, a)
	if code != exitFail || !strings.Contains(stderr, "regression") {
		t.Errorf("compare --fail-on-regression: exit %d, stderr %q; want 1", code, stderr)
	}
	var c struct {
		Schema string `json:"schema"`
		Status string `json:"status"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "c.json"))
	if err != nil || json.Unmarshal(data, &c) != nil || c.Schema != "pinprobe.compare/v1" || c.Status != "regressed" {
		t.Errorf("compare -o: %s (%v); want a pinprobe.compare/v1 document, regressed", data, err)
	}
	checkSchema(t, kindCompare, data)
	checkSchemaFile(t, kindReport, b)
	checkSchemaFile(t, kindReport, a)
	// A run compared with itself is refused (TestCompareRefusesOneRun).
	if code, stdout, _ := pinprobe(t, "compare", "--fail-on-regression", b, b); code != exitUsage || stdout != "" {
		t.Errorf("compare a run with itself: exit %d, %q; want 2 and nothing compared", code, stdout)
	}
	if code, _, _ := pinprobe(t, "compare", b); code != exitUsage {
		t.Errorf("compare with one file: exit %d; want 2", code)
	}
	if code, _, stderr := pinprobe(t, "compare", "-o", filepath.Join(t.TempDir(), "change.md"), b, b); code != exitUsage || !strings.Contains(stderr, "--format markdown >") {
		t.Errorf("compare -o change.md: exit %d, %q; want 2", code, stderr)
	}
}

// sameURL rewrites the URLs of a saved report from old to new.
func sameURL(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	oldHP := strings.TrimSuffix(strings.TrimPrefix(old, "http://"), "/")
	newHP := strings.TrimSuffix(strings.TrimPrefix(new, "http://"), "/")
	data = bytes.ReplaceAll(data, []byte(oldHP), []byte(newHP))
	_, oldPort, _ := strings.Cut(oldHP, ":")
	_, newPort, _ := strings.Cut(newHP, ":")
	data = bytes.ReplaceAll(data, []byte(`"port": `+oldPort), []byte(`"port": `+newPort))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
