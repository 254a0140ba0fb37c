package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/testserver"
)

// The Kubernetes recipe's way out of a pod: each pod writes its report as
// lines of its log (--format log-lines), and `pinprobe report` merges them
// from `kubectl logs --prefix`, as it merges the JSON files. No cluster runs
// here: the pods are pinprobe runs on loopback, their logs stdout and stderr
// as a container's log mixes them, and `kubectl logs -l ... --prefix` is
// simulated by prefixing each pod's lines and interleaving them line by
// line.

// podRun is one simulated pod: its name, its log and its JSON report.
type podRun struct {
	name, log, json string
}

// runPods runs n pinprobe processes, as the Job's pods, each writing its
// frame on stdout and its JSON to a file.
func runPods(t *testing.T, n int) []podRun {
	t.Helper()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a, testserver.Lo4b)
	dir := t.TempDir()
	var pods []podRun
	for i := range n {
		p := podRun{name: fmt.Sprintf("pinprobe-%d-x%dk2p", i, i), json: filepath.Join(dir, fmt.Sprintf("part-%d.json", i))}
		code, stdout, stderr := pinprobe(t, "--rate", "400", "-n", "80", "--no-preflight", "--vantage", "zone-"+string(rune('a'+i)),
			"--format", "log-lines", "-o", p.json, "--resolve", f.Resolve(), f.URL())
		if code != exitOK {
			t.Fatalf("pod %d: exit %d\n%s", i, code, stderr)
		}
		for _, l := range strings.SplitAfter(stdout, "\n") {
			if l != "" && !strings.HasPrefix(l, report.FrameTag+" ") {
				t.Fatalf("pod %d: stdout has a line that is not its frame's: %.80q", i, l)
			}
		}
		p.log = stderr + stdout // the plan on stderr, then the frame
		pods = append(pods, p)
	}
	return pods
}

// interleave is `kubectl logs --prefix` of the pods followed at once: each
// line prefixed with its pod, the pods' lines taken in turn.
func interleave(pods []podRun) string {
	var lines [][]string
	for _, p := range pods {
		var ls []string
		for _, l := range strings.SplitAfter(p.log, "\n") {
			if l != "" {
				ls = append(ls, "[pod/"+p.name+"/pinprobe] "+l)
			}
		}
		lines = append(lines, ls)
	}
	var s strings.Builder
	for i := 0; ; i++ {
		wrote := false
		for _, ls := range lines {
			if i < len(ls) {
				s.WriteString(ls[i])
				wrote = true
			}
		}
		if !wrote {
			return s.String()
		}
	}
}

// mergedJSON is a merged report's JSON without its command (the command
// that merged it), the names of its inputs renamed by names: the file and
// pod names differ between the two ways, and nothing else may.
func mergedJSON(t *testing.T, out string, names map[string]string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("merged report: %v", err)
	}
	delete(m, "command")
	var rename func(v any)
	rename = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if notes, ok := e.([]any); ok && k == "notes" {
					for i, n := range notes {
						for from, to := range names {
							n = strings.ReplaceAll(n.(string), from, to)
						}
						notes[i] = n
					}
				}
				if s, ok := e.(string); ok && (k == "file" || k == "input") {
					for from, to := range names {
						if s == from || strings.HasPrefix(s, from+":") {
							v[k] = to + s[len(from):]
						}
					}
				}
				rename(e)
			}
		case []any:
			for _, e := range v {
				rename(e)
			}
		}
	}
	rename(m)
	return m
}

// TestReportPodLogs: the report merged from three pods' interleaved logs
// (`kubectl logs -l job-name=pinprobe --prefix --tail=-1 | pinprobe
// report -`) is exactly the report merged from their three JSON files,
// each pod named by its pod; the pods' logs saved one by one (`kubectl logs
// POD > FILE`) merge the same.
func TestReportPodLogs(t *testing.T) {
	t.Parallel()
	pods := runPods(t, 3)
	stream := "error: a line kubectl writes of its own\n" + interleave(pods)

	var out, errb bytes.Buffer
	if code := runWith(t.Context(), []string{"report", "--format", "json", "-"}, strings.NewReader(stream), &out, &errb); code != exitOK {
		t.Fatalf("report - of the pods' logs: exit %d\n%s", code, errb.String())
	}
	files := []string{"report", "--format", "json"}
	names := map[string]string{}
	for _, p := range pods {
		files = append(files, p.json)
		names[p.json] = "pod/" + p.name
	}
	code, fromFiles, stderr := pinprobe(t, files...)
	if code != exitOK {
		t.Fatalf("report of the JSON files: exit %d\n%s", code, stderr)
	}
	got, want := mergedJSON(t, out.String(), nil), mergedJSON(t, fromFiles, names)
	if d := firstDiff("", got, want); d != "" {
		t.Errorf("the merge of the pods' logs differs from the merge of their JSON files: %s", d)
	}
	rep := decodeReport(t, out.Bytes())
	if len(rep.Inputs) != 3 || rep.Inputs[0].File != "pod/"+pods[0].name || len(rep.Vantages) != 3 {
		t.Errorf("inputs %+v, %d vantages; want the 3 pods by name, 3 vantages", rep.Inputs, len(rep.Vantages))
	}

	// One log file per pod, without prefixes: named by file and line.
	dir := t.TempDir()
	args := []string{"report", "--format", "json"}
	for i, p := range pods {
		name := filepath.Join(dir, fmt.Sprintf("pod-%d.log", i))
		if err := os.WriteFile(name, []byte(p.log), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, name)
	}
	code, perPod, stderr := pinprobe(t, args...)
	if code != exitOK {
		t.Fatalf("report of the pods' log files: exit %d\n%s", code, stderr)
	}
	if r := decodeReport(t, []byte(perPod)); r.Totals.Requests != rep.Totals.Requests || !strings.HasSuffix(r.Inputs[0].File, "pod-0.log line 2") {
		t.Errorf("merge of the log files: %d requests, first input %q; want %d, named by file and line", r.Totals.Requests, r.Inputs[0].File, rep.Totals.Requests)
	}
}

// TestReportPodLogsRefused: a log whose frame was cut or garbled, or that
// holds none, is refused with one line naming the pod or the stream (exit
// 2), never merged without it.
func TestReportPodLogsRefused(t *testing.T) {
	t.Parallel()
	pods := runPods(t, 2)
	cut := pods[1]
	i := strings.Index(cut.log, report.FrameTag)
	cut.log = cut.log[:i+200] + "\n"
	for _, tt := range []struct {
		name, stream, want string
	}{
		{"a frame cut short", interleave([]podRun{pods[0], cut}), "(pod/" + pods[1].name + "): part 1 of"},
		{"no frame", "pinprobe: plan: 10 req/s\nsomething else\n", "read report standard input: not a pinprobe JSON report, and no pinprobe-report/v1 line in it"},
		{"empty", "", "no pinprobe-report/v1 line"},
	} {
		var out, errb bytes.Buffer
		code := runWith(t.Context(), []string{"report", "-"}, strings.NewReader(tt.stream), &out, &errb)
		if code != exitUsage || out.Len() != 0 || !strings.Contains(errb.String(), tt.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2, one line with %q", tt.name, code, errb.String(), tt.want)
		}
	}
}

// firstDiff is where two decoded JSON values first differ, "" if nowhere.
func firstDiff(path string, a, b any) string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return fmt.Sprintf("%s: %.200v / %.200v", path, a, b)
		}
		for k := range av {
			if d := firstDiff(path+"."+k, av[k], bv[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return fmt.Sprintf("%s: %.200v / %.200v", path, a, b)
		}
		for i := range av {
			if d := firstDiff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if a != b {
		return fmt.Sprintf("%s: %v / %v", path, a, b)
	}
	return ""
}
