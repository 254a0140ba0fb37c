package report_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/report"
)

// frameLines is r framed, one string per line (with its newline).
func frameLines(t *testing.T, r *report.Report) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := report.WriteFrames(&buf, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	return lines[:len(lines)-1]
}

func jsonOf(t *testing.T, r *report.Report) string { return string(docfix.JSON(t, r)) }

// TestFrameRoundTrip: a report framed and read back is the report, every
// line of its frame is shorter than the 16 KiB a container runtime keeps
// whole, and the lines are found among others: a `kubectl logs --prefix`
// stream of two pods, each frame's lines interleaved with the other's and
// with stderr, CRLF line ends, and long lines that hold no frame.
func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	a, b := docfix.SavedGolden(t), docfix.Saved(t, "revision1-demo.json")
	la, lb := frameLines(t, a), frameLines(t, b)
	if len(lb) < 2 {
		t.Fatalf("a frame of %d lines; the test wants a report of several parts", len(lb))
	}
	for _, l := range append(la, lb...) {
		if len(l) >= 16<<10 || !strings.HasPrefix(l, report.FrameTag+" ") {
			t.Fatalf("a frame line of %d bytes starting %.30q; want under 16 KiB, starting with the tag", len(l), l)
		}
	}
	// One pod's log alone, as `kubectl logs POD` gives it.
	frames, err := report.ReadFrames(strings.NewReader("pinprobe: plan: 100 req/s\n"+strings.Join(la, "")), "a.log")
	if err != nil || len(frames) != 1 {
		t.Fatalf("ReadFrames of one log: %d frames, %v", len(frames), err)
	}
	if got, want := jsonOf(t, frames[0].Report), jsonOf(t, a); got != want {
		t.Errorf("the report read back differs from the one framed")
	}
	if frames[0].Name != "a.log line 2" {
		t.Errorf("name %q; want a.log line 2", frames[0].Name)
	}

	// Two pods, --prefix, interleaved line by line with stderr between.
	const pa, pb = "[pod/pinprobe-0-x7k2p/pinprobe] ", "[pod/pinprobe-1-q9w4z/pinprobe] "
	var s strings.Builder
	s.WriteString(pa + "pinprobe: waiting 12.5s for --start-at 17:00:00.000Z\n")
	s.WriteString(strings.Repeat("x", 40<<10) + " a long line of something else pinprobe-report\n")
	for i := range max(len(la), len(lb)) {
		if i < len(la) {
			s.WriteString(pa + strings.TrimSuffix(la[i], "\n") + "\r\n")
		}
		s.WriteString(pb + "pinprobe: warning: something on stderr\n")
		if i < len(lb) {
			s.WriteString(pb + lb[i])
		}
	}
	s.WriteString("no newline at the end")
	frames, err = report.ReadFrames(strings.NewReader(s.String()), "standard input")
	if err != nil || len(frames) != 2 {
		t.Fatalf("ReadFrames of two pods: %d frames, %v", len(frames), err)
	}
	got := map[string]string{frames[0].Name: jsonOf(t, frames[0].Report), frames[1].Name: jsonOf(t, frames[1].Report)}
	if got["pod/pinprobe-0-x7k2p"] != jsonOf(t, a) || got["pod/pinprobe-1-q9w4z"] != jsonOf(t, b) {
		t.Errorf("frames named %s and %s; want each pod's own report under its name", frames[0].Name, frames[1].Name)
	}

	// A stream without a frame is no error here; the caller says so.
	if frames, err := report.ReadFrames(strings.NewReader("just a log\n"), "x"); err != nil || len(frames) != 0 {
		t.Errorf("a stream without frames: %d frames, %v; want none, no error", len(frames), err)
	}
}

// TestFrameRefusals: a frame broken on its way is refused with one line
// that names the stream's line and the pod, never merged as if whole.
func TestFrameRefusals(t *testing.T) {
	t.Parallel()
	lines := frameLines(t, docfix.Saved(t, "revision1-demo.json"))
	o := docfix.Saved(t, "revision1-demo.json")
	o.Command = append(o.Command, "--another-run")
	other := frameLines(t, o)
	if len(lines) < 2 || len(other) != len(lines) || other[0] == lines[0] {
		t.Fatalf("frames of %d and %d lines; the test wants two reports of several parts", len(lines), len(other))
	}
	const pod = "[pod/pinprobe-2-abcde/pinprobe] "
	n := len(lines)
	with := func(edit func(ls []string) []string) string {
		ls := edit(append([]string(nil), lines...))
		for i := range ls {
			ls[i] = pod + ls[i]
		}
		return "pinprobe: plan\n" + strings.Join(ls, "")
	}
	for _, tt := range []struct {
		name, stream, want string
	}{
		{"cut short", with(func(ls []string) []string { ls[0] = ls[0][:len(ls[0])/2] + "\n"; return ls }),
			"line 2 (pod/pinprobe-2-abcde): part 1 of"},
		{"garbled", with(func(ls []string) []string {
			b := []byte(ls[0])
			b[len(b)/2] ^= 0x01
			ls[0] = string(b)
			return ls
		}), "line 2 (pod/pinprobe-2-abcde): part 1 of " + fmt.Sprint(n) + " of report"},
		{"a part missing", with(func(ls []string) []string { return append(ls[:1], ls[2:]...) }),
			"standard input (pod/pinprobe-2-abcde): report " + lines[0][19:31] + " begun on line 2: 1 of its " + fmt.Sprint(n) + " parts never came"},
		{"read with --tail", with(func(ls []string) []string { return ls[n-1:] }), "parts never came"},
		{"a part twice", with(func(ls []string) []string { return append(ls[:1], ls...) }), "line 3 (pod/pinprobe-2-abcde): part 1 of " + fmt.Sprint(n) + " of report"},
		{"newer frame", with(func(ls []string) []string {
			ls[0] = strings.Replace(ls[0], "pinprobe-report/v1", "pinprobe-report/v2", 1)
			return ls
		}), "a pinprobe-report/v2 line, from a newer pinprobe"},
		{"garbled head", with(func(ls []string) []string { ls[0] = "pinprobe-report/v1 zz\n"; return ls }), "line 2 (pod/pinprobe-2-abcde): a pinprobe-report/v1 line garbled"},
		{"joined to the next line", with(func(ls []string) []string {
			ls[0] = strings.TrimSuffix(ls[0], "\n") + ls[1]
			return append(ls[:1], ls[2:]...)
		}), "line 2 (pod/pinprobe-2-abcde): part 1 of 2 of report " + lines[0][19:31] + " is 13"},
		{"longer than a frame's line", with(func(ls []string) []string {
			ls[0] = strings.TrimSuffix(ls[0], "\n") + other[0]
			return ls
		}), "line 2: a pinprobe-report/v1 line longer than the 16096 bytes"},
		{"a part of another report", with(func(ls []string) []string {
			// Same ID and place, another report's data: only the whole's
			// hash can tell.
			f := strings.SplitN(ls[0], " ", 5)
			g := strings.SplitN(other[0], " ", 5)
			ls[0] = strings.Join(append(f[:3:3], g[3], g[4]), " ")
			return ls
		}), "does not match its ID"},
	} {
		frames, err := report.ReadFrames(strings.NewReader(tt.stream), "standard input")
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %d frames, error %v; want one line with %q", tt.name, len(frames), err, tt.want)
		}
	}
}

// FuzzReadFrames: whatever a log holds, ReadFrames returns reports or one
// line of error, never a panic; a frame cut anywhere is refused, never read
// as a report.
func FuzzReadFrames(f *testing.F) {
	var buf bytes.Buffer
	if err := report.WriteFrames(&buf, docfix.Saved(f, "not-probed.json")); err != nil {
		f.Fatal(err)
	}
	frame := buf.String()
	f.Add(frame, 0)
	f.Add("[pod/p-0-a/pinprobe] "+frame, 10)
	f.Add("x\n"+frame+"y\n", len(frame)/2)
	f.Add("pinprobe-report/v1 000000000000 1/1 00000000 \n", 3)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		frames, err := report.ReadFrames(strings.NewReader(s), "fuzz")
		if err != nil && strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("error %q is not one line", err)
		}
		if err == nil && len(frames) > 0 && !strings.Contains(s, report.FrameTag) {
			t.Errorf("%d frames from a stream without the tag", len(frames))
		}
		// The frame cut short at any byte but its newline: never a report.
		if cut > 0 && cut < len(frame)-1 {
			got, err := report.ReadFrames(strings.NewReader(frame[:cut]+"\n"), "fuzz")
			if err == nil && len(got) > 0 {
				t.Errorf("a frame cut at byte %d of %d read as a report", cut, len(frame))
			}
		}
	})
}

// TestFrameTooLarge: a report whose frame would pass MaxFrameBytes is
// refused before a line is written, saying what keeps it.
func TestFrameTooLarge(t *testing.T) {
	t.Parallel()
	r := docfix.Saved(t, "not-probed.json")
	noise := make([]byte, 8<<20) // random hex: 4 bits a byte once gzipped
	rnd := rand.New(rand.NewChaCha8([32]byte{7}))
	for i := range noise {
		noise[i] = "0123456789abcdef"[rnd.IntN(16)]
	}
	r.Notes = append(r.Notes, string(noise))
	var buf bytes.Buffer
	err := report.WriteFrames(&buf, r)
	if err == nil || !strings.Contains(err.Error(), "more than the 4 MiB a report in a log may be (keep it with -o FILE)") || buf.Len() != 0 {
		t.Errorf("a frame over 4 MiB: %d bytes written, error %v; want none written, the limit said", buf.Len(), err)
	}
}
