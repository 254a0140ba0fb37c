package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

// FuzzParseArgs: any command line parses or fails as a usage error of one
// line, never a panic; every flag value goes through its own Set.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"--rate\x00max\x00-n\x0010\x00http://a.test/",
		"-r\x000\x00http://a.test/",
		"--rate\x001e7\x00-d\x00-1s\x00http://a.test/",
		"--conn-requests\x00auto\x00--group-by\x00X-Served-By\x00http://a.test/",
		"--max-failure-rate\x000.1%\x00--max-p99\x00500ms\x00http://a.test/",
		"-H\x00Authorization Bearer x\x00http://a.test/",
		"--resolve\x00a.test:80:127.0.0.1,::1\x00http://a.test/",
		"--fail-status\x005xx,429\x00--http\x002\x00https://a.test/",
		"--dns-server\x00[::1]:53\x00--interval\x0010ms\x00http://a.test/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		_, _, err := parseArgs(args)
		if err == nil {
			return
		}
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("parseArgs(%q): %T %v; want a usage error", args, err, err)
		}
	})
}

// FuzzTargetsFile: a targets file parses or fails with an error that names
// the file, on one line.
func FuzzTargetsFile(f *testing.F) {
	for _, s := range []string{
		"# c\nGET https://a.test/login\nX-A: 1\n\nPOST https://a.test/x\nContent-Type: text/plain\n",
		"https://a.test/\n", "G(T http://a.test/\n", "GET http://a.test/ extra\n", "POST http://a.test/\n@\n",
		"GET http://a.test/\nNoColon\n", "GET http://a.test/\nAuthorization: Bearer ${NOPE_NOT_SET}\n", "\n\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		specs, err := parseTargets(t.Context(), "t.txt", []byte(data), strings.NewReader(""))
		if err != nil {
			if !strings.Contains(err.Error(), "t.txt") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("parseTargets: error %q does not name the file on one line", err)
			}
			return
		}
		if len(specs) == 0 {
			t.Errorf("parseTargets(%q): no target and no error", data)
		}
	})
}

// FuzzSavedReport: whatever bytes a saved report holds, `pinprobe report`
// (text and Markdown) and `compare` refuse it with exit 2 and one line on
// stderr naming it, or render it (exit 0, or 130 for an interrupted run):
// never a panic, never more than the documented memory (at most 200 times
// its size allocated in all, and a fixed 64 MiB), never a control
// character in the text or the error, never raw HTML in the Markdown.
func FuzzSavedReport(f *testing.F) {
	var golden bytes.Buffer
	if err := report.JSON(&golden, fixture.GoldenReport(f)); err != nil {
		f.Fatal(err)
	}
	g := golden.Bytes()
	other := filepath.Join(f.TempDir(), "other.json")
	if err := os.WriteFile(other, g, 0o644); err != nil {
		f.Fatal(err)
	}
	f.Add(g)
	f.Add(fixture.ManyEndpoints(f, 3, "0123abcd"))
	var vantages bytes.Buffer // a merge with its breakdown by vantage point
	if err := report.JSON(&vantages, fixture.VantageMerge(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(vantages.Bytes())
	f.Add(g[:len(g)/2])
	f.Add([]byte(`{"schema": "pinprobe.report/v1"}`))
	f.Add([]byte(`{"schema": "pinprobe.report/v1", "endpoints": [{}, {}]}`))
	for _, edit := range []func(m map[string]any){
		func(m map[string]any) { docfix.Obj(f, m, "endpoints", "0", "status")["404"] = -5.0 },
		func(m map[string]any) { docfix.Arr(f, m, "timeline", "series", "1", "requests")[0] = 1.0 },
		func(m map[string]any) { docfix.Obj(f, m, "timeline")["interval_s"] = 4e9 },
		func(m map[string]any) { docfix.Obj(f, m, "timeline")["start"] = "0001-01-01T00:00:00.001Z" },
		func(m map[string]any) { m["version"] = "\x1b]0;owned\x07<script>x</script>" },
		func(m map[string]any) { docfix.Obj(f, m, "fingerprints", "0")["server"] = "<img src=x>\u202e" },
		func(m map[string]any) { docfix.Obj(f, m, "endpoints", "1")["address"] = "fe80::1%<b>" },
	} {
		f.Add(docfix.EditJSON(f, g, edit))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, args := range [][]string{{"report", "-"}, {"report", "--format", "markdown", "-"}, {"compare", "-", other}} {
			var out, errOut bytes.Buffer
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			code := func() (code int) {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("pinprobe %s: panic: %v", strings.Join(args, " "), p)
					}
				}()
				return runWith(t.Context(), args, bytes.NewReader(doc), &out, &errOut)
			}()
			runtime.ReadMemStats(&after)
			what := "pinprobe " + strings.Join(args, " ")
			if n := after.TotalAlloc - before.TotalAlloc; n > 200*uint64(len(doc))+64<<20 && !check.Race {
				t.Errorf("%s: %d bytes in, %d allocated; want at most 200 times and 64 MiB", what, len(doc), n)
			}
			switch code {
			case exitUsage:
				if l := errOut.String(); out.Len() != 0 || strings.Count(l, "\n") != 1 || !strings.Contains(l, "standard input") || fixture.TerminalUnsafe(l, false) != "" {
					t.Errorf("%s: exit 2, stdout %d bytes, stderr %q; want one printable line naming standard input", what, out.Len(), l)
				}
			case exitOK, exitInterrupted:
				if bad := fixture.TerminalUnsafe(out.String(), false); args[1] != "--format" && bad != "" {
					t.Errorf("%s: a control character reaches the terminal: %q", what, bad)
				}
				if l := fixture.MarkdownRawHTML(out.String()); args[1] == "--format" && l != "" {
					t.Errorf("%s: raw HTML in the Markdown: %q", what, l)
				}
			default:
				t.Errorf("%s: exit %d, %s; want 0, 2 or 130", what, code, errOut.String())
			}
		}
	})
}
