package report_test

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/report"
)

// revision1 is a report pinprobe 0.1.0 wrote before revisions (the demo's,
// of main 0255458), kept as it was: every later pinprobe must read it.
const revision1 = "testdata/revision1-demo.json"

// TestRevisionNewerRead: a report of a newer revision is read without the
// fields this pinprobe does not know, and a note names them; its counts,
// verdict and everything known are read as they were.
func TestRevisionNewerRead(t *testing.T) {
	good := goldenJSON(t)
	want, err := report.Parse(good, "now.json")
	if err != nil {
		t.Fatal(err)
	}
	if want.Revision != report.Revision {
		t.Errorf("a report written now has revision %d, want %d", want.Revision, report.Revision)
	}
	newer := docfix.EditJSON(t, good, func(m map[string]any) {
		m["revision"] = float64(report.Revision + 1)
		docfix.NewerFields(t, m)
	})
	got, err := report.Parse(newer, "newer.json")
	if err != nil {
		t.Fatalf("a report of a newer revision with fields this pinprobe does not know: %v", err)
	}
	if len(got.Notes) != 1 {
		t.Fatalf("notes = %q, want one saying what was left out", got.Notes)
	}
	note := got.Notes[0]
	for _, w := range []string{"newer.json was written by a newer pinprobe", fmt.Sprintf("revision %d", report.Revision+1), "6 fields it does not know were left out",
		"outage", "verdict.confidence", "endpoints[].tcp_rtt_ms", "families.ipv6.tcp_rtt_ms", "endpoints[].samples[].trace"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q does not say %q", note, w)
		}
	}
	if strings.Count(note, "endpoints[].tcp_rtt_ms") != 1 {
		t.Errorf("note %q names one field of every endpoint more than once", note)
	}
	got.Notes, got.Revision = nil, want.Revision
	if a, b := docfix.JSON(t, want), docfix.JSON(t, got); !bytes.Equal(a, b) {
		t.Errorf("what a newer revision's report holds of this revision reads differently:\n%s\nwant\n%s", b, a)
	}
	// Written again, it is a report of this revision, which says what
	// it lost, and reads back without a word more.
	back := docfix.RoundTrip(t, mustParse(t, newer, "newer.json"), "again.json")
	if back.Revision != report.Revision || len(back.Notes) != 1 || !strings.Contains(back.Notes[0], "newer.json was written by a newer pinprobe") {
		t.Errorf("re-written: revision %d, notes %q; want revision %d and the note kept", back.Revision, back.Notes, report.Revision)
	}
	docfix.CheckSchema(t, "report", docfix.ReportJSON(t, back))
}

// TestRevisionUnknownRefused: in a report of this revision or older, a
// field the format does not have is refused, as before revisions: it is
// a forgery or a mistake, not something a newer pinprobe added.
func TestRevisionUnknownRefused(t *testing.T) {
	good := goldenJSON(t)
	for _, rev := range []any{nil, 1.0, float64(report.Revision)} {
		data := docfix.EditJSON(t, good, func(m map[string]any) {
			if rev == nil {
				delete(m, "revision")
			} else {
				m["revision"] = rev
			}
			docfix.Obj(t, m, "endpoints", "0")["tcp_rtt_ms"] = 3.0
		})
		_, err := report.Parse(data, "odd.json")
		if err == nil || !strings.Contains(err.Error(), `unknown field "tcp_rtt_ms"`) || !strings.HasPrefix(err.Error(), "read report odd.json: ") {
			t.Errorf("revision %v with a field the format does not have: err = %v, want it refused, naming it", rev, err)
		}
	}
	for _, tc := range []struct {
		rev  any
		want string
	}{
		{0.0, "revision 0: want a whole number from 1"},
		{-2.0, "revision -2: want a whole number from 1"},
		{2.5, "revision 2.5: want a whole number from 1"},
		{"3", `revision "3": want a whole number from 1`},
	} {
		data := docfix.EditJSON(t, good, func(m map[string]any) {
			m["revision"] = tc.rev
			m["outage"] = true // so the head is read for the reason
		})
		if _, err := report.Parse(data, "odd.json"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("revision %v: err = %v, want %q", tc.rev, err, tc.want)
		}
	}
	// A newer revision is no way past the checks of what is known: a
	// field it has that this pinprobe knows is checked as ever.
	data := docfix.EditJSON(t, good, func(m map[string]any) {
		m["revision"] = 9.0
		m["outage"] = true
		docfix.Obj(t, m, "endpoints", "0")["bytes"] = -1.0
	})
	if _, err := report.Parse(data, "odd.json"); err == nil || !strings.Contains(err.Error(), "endpoints[0].bytes: -1 is negative") {
		t.Errorf("a newer revision with a negative count: err = %v, want it refused", err)
	}
}

func mustParse(t *testing.T, data []byte, name string) *report.Report {
	t.Helper()
	r, err := report.Parse(data, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRevisionNewerStrictAsEver: what a newer revision's report is read
// without is only what this pinprobe does not know: data after the report
// is refused as it is from a report of this revision, and a field known
// here whose key differs in case is read as encoding/json reads it.
func TestRevisionNewerStrictAsEver(t *testing.T) {
	newer := docfix.EditJSON(t, goldenJSON(t), func(m map[string]any) {
		m["revision"] = float64(report.Revision + 1)
		m["cause"] = "gremlins"
		delete(m, "interrupted")
		m["Interrupted"] = true
	})
	r, err := report.Parse(newer, "newer.json")
	if err != nil || !r.Interrupted || !strings.Contains(r.Notes[0], "1 field it does not know was left out (cause)") {
		t.Errorf("a known field in another case: err %v, interrupted %v, notes %q", err, r != nil && r.Interrupted, r.Notes)
	}
	trailing := append(slices.Clone(newer), []byte(` {"schema": "x"} garbage`)...)
	if _, err := report.Parse(trailing, "newer.json"); err == nil || !strings.Contains(err.Error(), "data after the report") {
		t.Errorf("a newer revision's report with data after it: err %v, want it refused", err)
	}
}

// TestRevision1Read: a report written before revisions (revision 1) reads
// and is written again as this revision (merge's TestRevision1Merged
// merges it with one of this revision).
func TestRevision1Read(t *testing.T) {
	data, err := os.ReadFile(revision1)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"revision"`)) {
		t.Fatalf("%s has a revision: it must stay as revision 1 wrote it", revision1)
	}
	old := mustParse(t, data, "old.json")
	if old.Revision != 0 || old.Totals.Requests == 0 || old.Verdict.Status != report.VerdictConcentrated {
		t.Fatalf("revision 1 read as revision %d, %d requests, verdict %q", old.Revision, old.Totals.Requests, old.Verdict.Status)
	}
	again := docfix.RoundTrip(t, old, "again.json")
	if again.Revision != report.Revision || again.Totals.Requests != old.Totals.Requests || again.Totals.HDR != old.Totals.HDR {
		t.Errorf("revision 1 written again: revision %d (want %d), %d requests (want %d)", again.Revision, report.Revision, again.Totals.Requests, old.Totals.Requests)
	}
}

// revision2 is the demo's report as pinprobe wrote it at revision 2 (of
// main 7a33e52), kept as it was.
const revision2 = "testdata/revision2-demo.json"

// TestRevision2Read: a report of revision 2 reads whole, with no note,
// and is written again as this revision with nothing else changed: it has
// no id_ranges, so every request of its run is its own.
func TestRevision2Read(t *testing.T) {
	data, err := os.ReadFile(revision2)
	if err != nil {
		t.Fatal(err)
	}
	old := mustParse(t, data, "old.json")
	if old.Revision != 2 || len(old.Notes) != 0 || old.Totals.Requests == 0 {
		t.Fatalf("revision 2 read as revision %d, notes %q, %d requests", old.Revision, old.Notes, old.Totals.Requests)
	}
	again := docfix.RoundTrip(t, old, "again.json")
	old.Revision = report.Revision
	a, b := docfix.JSON(t, old), docfix.JSON(t, again)
	if again.Revision != report.Revision || !bytes.Equal(a, b) || bytes.Contains(b, []byte("id_ranges")) {
		t.Errorf("revision 2 written again as %d differs from what was read, or has id_ranges", again.Revision)
	}
	docfix.CheckSchema(t, "report", b)
}

// TestIDRangesChecked: an endpoint's id_ranges read when they are from 1,
// apart and in order, at most MaxIDRanges; otherwise the report is refused
// naming them.
func TestIDRangesChecked(t *testing.T) {
	good := goldenJSON(t)
	with := func(ranges ...[2]float64) []byte {
		return docfix.EditJSON(t, good, func(m map[string]any) {
			var rs []any
			for _, r := range ranges {
				rs = append(rs, map[string]any{"first": r[0], "last": r[1]})
			}
			m["endpoints"].([]any)[0].(map[string]any)["id_ranges"] = rs
		})
	}
	r, err := report.Parse(with([2]float64{1, 40}, [2]float64{42, 42}, [2]float64{50, 90}), "ranges.json")
	if err != nil || len(r.Endpoints[0].IDRanges) != 3 || r.Endpoints[0].IDRanges[2] != (report.IDRange{First: 50, Last: 90}) {
		t.Fatalf("good ranges: %v", err)
	}
	many := make([][2]float64, report.MaxIDRanges+1)
	for i := range many {
		many[i] = [2]float64{float64(3*i + 1), float64(3*i + 1)}
	}
	for name, data := range map[string][]byte{
		"zero": with([2]float64{0, 4}), "backwards": with([2]float64{5, 4}), "touching": with([2]float64{1, 4}, [2]float64{5, 9}),
		"out of order": with([2]float64{10, 12}, [2]float64{1, 4}), "too many": with(many...),
	} {
		if _, err := report.Parse(data, name); err == nil || !strings.Contains(err.Error(), "id_ranges") {
			t.Errorf("%s: %v; want it refused naming id_ranges", name, err)
		}
	}
}
