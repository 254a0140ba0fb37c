package main

// Where the report goes: -o before stdout, a stdout or stderr whose reader
// has gone, and files that are replaced whole or not at all.

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/testserver"
)

// closedStdout is a stdout whose reader has gone: every write fails as a
// write to a closed pipe does.
type closedStdout struct{ writes int }

func (c *closedStdout) Write(p []byte) (int, error) {
	c.writes++
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
}

// demoReport is the saved report of examples/, the demo's run.
const demoReport = "examples/demo-report.json"

// TestClosedPipesSubprocess: the real binary with a stdout or stderr whose
// reader has gone (a pager quit early, "| head") still writes its -o file
// and exits with the run's code, not 141 (SIGPIPE).
func TestClosedPipesSubprocess(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGPIPE on windows")
	}
	bin := buildPinprobe(t)
	for _, closed := range []string{"stdout", "stderr", "both"} {
		t.Run(closed, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "x.json")
			cmd := exec.Command(bin, "--demo", "-q", "-d", "1s", "-o", out)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // the reader is gone before pinprobe writes a byte
			if closed != "stderr" {
				cmd.Stdout = w
			}
			if closed != "stdout" {
				cmd.Stderr = w
			}
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("pinprobe did not exit within 30s")
			}
			if code := cmd.ProcessState.ExitCode(); code != exitOK {
				t.Errorf("exit %d (%s) with a closed %s; want 0, the run's own; stderr:\n%s", code, cmd.ProcessState, closed, stderr.String())
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("no -o file with a closed %s: %v", closed, err)
			}
			if rep := decodeReport(t, data); rep.Totals.Requests == 0 {
				t.Errorf("-o holds no request")
			}
			if closed == "stderr" && !strings.Contains(stdout.String(), "VERDICT") {
				t.Errorf("stdout lacks the report with stderr closed:\n%s", stdout.String())
			}
		})
	}
}

// TestClosedStdout: report, compare and --preflight write -o first, stop
// printing at a closed stdout and exit as they would have; without -o a
// line on stderr says the report was not printed whole.
func TestClosedStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := testserver.StartFleet(t, testserver.FleetOptions{}, testserver.Lo4a)
	data, err := os.ReadFile(demoReport)
	if err != nil {
		t.Fatal(err)
	}
	other := writeIn(t, dir, "other.json", otherRun(t, data, "0a0a0a0a"))
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"report", []string{"report", "-o", filepath.Join(dir, "report.json"), demoReport}},
		{"compare", []string{"compare", "-o", filepath.Join(dir, "compare.json"), demoReport, other}},
		{"preflight", []string{"--preflight", "-o", filepath.Join(dir, "preflight.json"), "--resolve", f.Resolve(), f.URL()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout closedStdout
			var stderr bytes.Buffer
			code := run(t.Context(), tt.args, &stdout, &stderr)
			if code != exitOK || stderr.Len() != 0 {
				t.Errorf("exit %d, stderr %q with a closed stdout; want 0 and nothing said", code, stderr.String())
			}
			if stdout.writes != 1 {
				t.Errorf("%d writes to the closed stdout; want 1, then no more", stdout.writes)
			}
			if data, err := os.ReadFile(tt.args[2]); err != nil || !bytes.HasPrefix(data, []byte("{")) {
				t.Errorf("-o: %v, %.40q; want the JSON", err, data)
			}
		})
	}
	t.Run("without -o", func(t *testing.T) {
		var stdout closedStdout
		var stderr bytes.Buffer
		code := run(t.Context(), []string{"report", demoReport}, &stdout, &stderr)
		if code != exitOK || !strings.Contains(stderr.String(), "stdout was closed") || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("exit %d, stderr %q; want 0 and one line saying stdout was closed", code, stderr.String())
		}
	})
}

// TestWriteFileWholeOrNothing: a write that fails halfway (a full disk)
// leaves the previous file as it was and no temporary file beside it; one
// that succeeds replaces it, keeping its permissions and a symbolic link
// to it; what is not a regular file is written in place, never replaced.
func TestWriteFileWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	old := []byte(`{"the previous": "report"}` + "\n")
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	err := writeFile(path, func(w io.Writer) error {
		w.Write([]byte(`{"half of`))
		return &os.PathError{Op: "write", Path: "whatever", Err: syscall.ENOSPC}
	})
	if err == nil || !strings.Contains(err.Error(), "--output "+path+": no space left on device") {
		t.Errorf("error %v; want it to name -o and the cause", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Errorf("after a failed write the file holds %q; want the previous %q", got, old)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory after a failed write; want the one, no temporary file left", len(entries))
	}

	link := filepath.Join(dir, "latest.json")
	if err := os.Symlink("run.json", link); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(link, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new\n" {
		t.Errorf("through the link the file holds %q; want %q", got, "new\n")
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link became %v (%v); want it kept", fi.Mode(), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the replaced file's mode %v (%v); want its own 0600", fi.Mode(), err)
	}

	if err := writeFile(os.DevNull, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Errorf("-o %s: %v", os.DevNull, err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("%s is now %v (%v): it was replaced", os.DevNull, fi.Mode(), err)
	}
}

// TestFullDiskKeepsPreviousReport: the real binary, its file size capped
// below the report's (as a full disk would stop it), exits 4 and leaves the
// previous -o report whole, which report still reads.
func TestFullDiskKeepsPreviousReport(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("ulimit -f in sh is how the disk fills here")
	}
	bin := buildPinprobe(t)
	out := filepath.Join(t.TempDir(), "run.json")
	if code, _, stderr := pinprobe(t, "report", "-o", out, demoReport); code != exitOK {
		t.Fatalf("report -o: exit %d\n%s", code, stderr)
	}
	old, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// ulimit -f counts blocks of 512 or 1024 bytes: either is far below
	// a report's size. Go ignores SIGXFSZ, so the write fails with EFBIG.
	cmd := exec.Command("sh", "-c", `ulimit -f 8 && exec "$0" "$@"`, bin, "--demo", "-q", "-d", "1s", "-o", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitWrite || !strings.Contains(stderr.String(), "--output "+out) {
		t.Errorf("exit %d with the file size capped; want %d and a line naming -o; stderr:\n%s", code, exitWrite, stderr.String())
	}
	if !strings.Contains(stdout.String(), "VERDICT") {
		t.Errorf("stdout lacks the report:\n%s", stdout.String())
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, old) {
		t.Fatalf("the previous report was changed: %d bytes, was %d", len(got), len(old))
	}
	if code, _, stderr := pinprobe(t, "report", out); code != exitOK {
		t.Errorf("report of the previous file: exit %d\n%s", code, stderr)
	}
}
