package main

import (
	"bufio"
	"context"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// The examples in examples/ are exercised here: each one must keep working
// as the tool changes.

// TestExampleReports: the demo's reports in examples/ are real reports of
// this version: the JSON validates against its schema and its invariants.
func TestExampleReports(t *testing.T) {
	checkSchemaFile(t, kindReport, "examples/demo-report.json")
	data, err := os.ReadFile("examples/demo-report.json")
	if err != nil {
		t.Fatal(err)
	}
	rep := decodeReport(t, data)
	checkReport(t, rep)
}

// TestExampleTargetsFile: the sign-in and signing targets parse, with the
// body read beside the file and the token taken from the environment.
func TestExampleTargetsFile(t *testing.T) {
	data, err := os.ReadFile("examples/targets.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SIGN_TOKEN", "s3cr3t-token")
	specs, err := parseTargets(t.Context(), "examples/targets.txt", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 {
		t.Fatalf("%d targets; want 3", len(specs))
	}
	sign := specs[1]
	if sign.method != "POST" || !strings.Contains(string(sign.body), `"document"`) || !sign.hasBody {
		t.Errorf("signing target: %+v; want a POST with the JSON body of sign-request.json", sign)
	}
	auth := ""
	for _, h := range sign.header {
		if h[0] == "Authorization" {
			auth = h[1]
		}
	}
	if auth != "Bearer s3cr3t-token" {
		t.Errorf("Authorization %q; want the token from $SIGN_TOKEN", auth)
	}
	if specs[2].method != "" || !strings.HasSuffix(specs[2].url, "/healthz") {
		t.Errorf("third target %+v; want a bare URL (GET)", specs[2])
	}
	os.Unsetenv("SIGN_TOKEN")
	code, _, stderr := pinprobe(t, "--targets", "examples/targets.txt")
	if code != exitUsage || !strings.Contains(stderr, "examples/targets.txt:18: ${SIGN_TOKEN} is not set") {
		t.Errorf("without SIGN_TOKEN: exit %d, %q; want 2 naming the line and the variable", code, stderr)
	}
}

// TestExampleBeforeAfter runs the gateway-change script against a local
// gateway whose IPv6 address answers 502 until the change fixes it (with a
// gate that 100 requests an address can prove: 5%).
func TestExampleBeforeAfter(t *testing.T) {
	if !testserver.HasIPv6Loopback() {
		t.Skip("no IPv6 loopback here")
	}
	bin := buildPinprobe(t)
	dir := t.TempDir()
	fixed := filepath.Join(dir, "fixed")
	broken := func(n int64, r *http.Request) testserver.Answer {
		if _, err := os.Stat(fixed); err == nil {
			return testserver.Answer{}
		}
		return testserver.Answer{Status: http.StatusBadGateway}
	}
	f := testserver.StartFleet(t, testserver.FleetOptions{Policies: map[netip.Addr]testserver.Policy{testserver.Lo6: broken}},
		testserver.Lo4a, testserver.Lo6)
	cmd := exec.CommandContext(t.Context(), "bash", "examples/before-after.sh", f.URL(), "--resolve", f.Resolve())
	cmd.Env = append(os.Environ(), "PINPROBE="+bin, "PROBE_ARGS=--rate 400 -n 200", "GATE=--max-failure-rate 5% --fail-on-verdict", "CHANGE=touch "+fixed, "OUT="+filepath.Join(dir, "out"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("before-after.sh: %v\n%s", err, out)
	}
	// Each run shows the top of its report: the verdict in one line with
	// the failures counted, and the gate of the run after. -n 200 over two
	// endpoints gives each its share give or take one (see
	// probe.PlannedRequests): ::1 fails 99, 100 or 101 of them.
	for _, want := range []string{"== before the change", "== after the change", "VERDICT OK 0 of 200 requests failed",
		"RELEASE GATE passed", "IPv6 failures gone"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`VERDICT CONCENTRATED (99|100|101) of 200 requests failed \([0-9.]+%\): IPv6 \(::1\) answers 502`).Match(out) {
		t.Errorf("output lacks the verdict of the run before: about 100 of 200 failed, IPv6 (::1) answers 502:\n%s", out)
	}
	for _, file := range []string{"before.json", "after.json", "compare.md", "compare.json"} {
		if _, err := os.Stat(filepath.Join(dir, "out", file)); err != nil {
			t.Errorf("the script left no %s: %v", file, err)
		}
	}
	checkSchemaFile(t, kindReport, filepath.Join(dir, "out", "before.json"))
	checkSchemaFile(t, kindReport, filepath.Join(dir, "out", "after.json"))
	checkSchemaFile(t, kindCompare, filepath.Join(dir, "out", "compare.json"))
}

// commandLines returns the pinprobe invocations written in a file, with
// line continuations joined.
func commandLines(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	var cur string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if cur != "" || strings.HasPrefix(l, "pinprobe ") {
			cur += " " + strings.TrimSuffix(l, "\\")
			if !strings.HasSuffix(l, "\\") {
				fields := strings.Fields(cur)
				for i, f := range fields {
					if f == ">" || f == "#" {
						fields = fields[:i]
						break
					}
				}
				out = append(out, fields[1:])
				cur = ""
			}
		}
	}
	return out
}

// TestExampleCIWorkflow: the GitHub Actions step's pinprobe command parses,
// with every flag it uses.
func TestExampleCIWorkflow(t *testing.T) {
	cmds := commandLines(t, "examples/ci/pinprobe-gate.yml")
	if len(cmds) != 1 {
		t.Fatalf("%d pinprobe commands in the workflow; want 1", len(cmds))
	}
	c, _, err := parseArgs(cmds[0])
	if err != nil {
		t.Fatalf("pinprobe %q: %v", cmds[0], err)
	}
	if c.format.value != "html" || c.output == "" || c.limits.MaxFailureRate != 0.001 || !c.failOnVerdict {
		t.Errorf("the workflow's command %q does not gate on the failure rate and verdict, or keep HTML and JSON", cmds[0])
	}
	checkCIBuildStep(t)
}

// checkCIBuildStep runs the workflow's build step as the runner would, in
// a workspace whose pinprobe-src is this checkout: it must leave a
// pinprobe on the PATH it adds, which says its version.
func checkCIBuildStep(t *testing.T) {
	check.Long(t, "a build of pinprobe")
	data, err := os.ReadFile("examples/ci/pinprobe-gate.yml")
	if err != nil {
		t.Fatal(err)
	}
	_, step, ok := strings.Cut(string(data), "- name: Build pinprobe\n        run: |\n")
	if !ok {
		t.Fatal("the workflow has no 'Build pinprobe' step of a run block")
	}
	var script []string
	for _, l := range strings.Split(step, "\n") {
		if !strings.HasPrefix(l, "          ") {
			break
		}
		script = append(script, strings.TrimSpace(l))
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	work, tmp := t.TempDir(), t.TempDir()
	if err := os.Symlink(root, filepath.Join(work, "pinprobe-src")); err != nil {
		t.Fatal(err)
	}
	ghPath := filepath.Join(tmp, "github_path")
	cmd := exec.Command("bash", "-e", "-c", strings.Join(script, "\n"))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "RUNNER_TEMP="+tmp, "GITHUB_PATH="+ghPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the build step %q: %v\n%s", script, err, out)
	}
	added, _ := os.ReadFile(ghPath)
	bin := filepath.Join(strings.TrimSpace(string(added)), "pinprobe")
	if _, err := os.Stat(bin); err != nil || !strings.HasPrefix(string(out), "pinprobe "+release) {
		t.Errorf("the build step left no pinprobe on the PATH it adds (%q: %v), or it did not say its version: %q", bin, err, out)
	}
}

// TestExampleNginxIncident runs the incident script: a real nginx on
// loopback, probed, stopped with its whole process group.
func TestExampleNginxIncident(t *testing.T) {
	t.Parallel()
	testserver.NginxBinary(t)
	if !testserver.HasIPv6Loopback() {
		t.Skip("no IPv6 loopback here")
	}
	bin := buildPinprobe(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "examples/nginx-incident/run.sh", "-q", "--format", "json")
	cmd.Env = append(os.Environ(), "PINPROBE="+bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run.sh: %v\n%s", err, stderr.String())
	}
	rep := decodeReport(t, out)
	checkReport(t, rep)
	v6, v4 := endpointByAddr(t, rep, "::1"), endpointByAddr(t, rep, "127.0.0.1")
	if v6.Status["502"] != v6.Requests || v6.Requests == 0 || v4.Status["200"] != v4.Requests || v4.Requests == 0 {
		t.Errorf("::1 %v of %d, 127.0.0.1 %v of %d; want every ::1 request answered 502 by nginx, every 127.0.0.1 one 200",
			v6.Status, v6.Requests, v4.Status, v4.Requests)
	}
	if !strings.Contains(stderr.String(), "upstream") {
		t.Errorf("the script did not show nginx's error log:\n%s", stderr.String())
	}
	// The script's own cleanup stopped nginx: nothing of its group is left.
	if left := testserver.GroupProcesses(cmd.Process.Pid); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}
