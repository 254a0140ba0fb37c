package docfix

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinprobe/pinprobe/internal/report"
)

// RoundTrip writes r as JSON, checks it against the report schema and
// reads it back with Read.
func RoundTrip(t testing.TB, r *report.Report, name string) *report.Report {
	t.Helper()
	return roundTrip(t, r, name, true)
}

// Reread is RoundTrip without the schema: for the tests that make many
// documents of one shape (the random splits of a run), each read back as
// a saved one is. The schema of that shape is checked where the test
// makes it first, with RoundTrip, and in the schema tests.
func Reread(t testing.TB, r *report.Report, name string) *report.Report {
	t.Helper()
	return roundTrip(t, r, name, false)
}

func roundTrip(t testing.TB, r *report.Report, name string, schema bool) *report.Report {
	t.Helper()
	doc := JSON(t, r)
	if schema {
		CheckSchema(t, KindReport, doc)
	}
	got, err := report.Read(bytes.NewReader(doc), name)
	if err != nil {
		t.Fatalf("report.Read(%s) = %v", name, err)
	}
	return got
}

// JSON is r as pinprobe saves it.
func JSON(t testing.TB, r *report.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := report.JSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// NewerFields adds members a newer revision could have, at every kind of
// place: the top, a nested object, an array element decoded on its own
// (an endpoint, a sample), a map's value (a family's stats).
func NewerFields(t *testing.T, m map[string]any) {
	m["outage"] = map[string]any{"since": "2026-06-16T20:43:00.000Z", "addresses": []any{"::1"}}
	Obj(t, m, "verdict")["confidence"] = 0.99
	Obj(t, m, "endpoints", "0")["tcp_rtt_ms"] = 3.0
	Obj(t, m, "endpoints", "1")["tcp_rtt_ms"] = 0.0
	Obj(t, m, "families", "ipv6")["tcp_rtt_ms"] = 3.0
	Obj(t, m, "endpoints", "1", "samples", "0")["trace"] = []any{map[string]any{"hop": 1.0}}
}

// SavedJSON is a report saved in internal/report/testdata: golden.json
// (fixture.GoldenReport), not-probed.json (a run whose every endpoint failed
// its preflight), each kept in step with the code that makes it by
// render's TestDocumentsGolden.
func SavedJSON(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(), "internal/report/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Saved is SavedJSON read as a report.
func Saved(t testing.TB, name string) *report.Report {
	t.Helper()
	r, err := report.Parse(SavedJSON(t, name), name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// SavedGolden is the golden report, read as saved: the report of a run
// over six endpoints where 2001:db8::7 fails 75% and 198.51.100.20 24%,
// judged.
func SavedGolden(t testing.TB) *report.Report { return Saved(t, "golden.json") }

// LatencyBomb is a latency histogram of one value in each of its buckets,
// the most a histogram inflates, as report's tests saved it: its encoding
// and how many values it holds.
func LatencyBomb(t testing.TB) (enc string, values int64) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(), "internal/report/testdata/latency-bomb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(string(data), &values, &enc); err != nil {
		t.Fatalf("latency-bomb.txt: %v", err)
	}
	return enc, values
}
