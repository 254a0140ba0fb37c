package compare_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/pinprobe/pinprobe/internal/cmpfix"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestCompareRevisions: a report written before revisions (revision 1)
// compares with the same run written again by this pinprobe (this
// revision) as nothing changed: each side is read at its own revision,
// and what one revision lacks is not a change.
func TestCompareRevisions(t *testing.T) {
	data, err := os.ReadFile("../report/testdata/revision1-demo.json")
	if err != nil {
		t.Fatal(err)
	}
	old, err := report.Parse(data, "old.json")
	if err != nil {
		t.Fatal(err)
	}
	now := docfix.RoundTrip(t, old, "now.json")
	if old.Revision != 0 || now.Revision != report.Revision {
		t.Fatalf("revisions %d and %d, want 0 (none) and %d", old.Revision, now.Revision, report.Revision)
	}
	c := compare.Reports(old, now)
	if c.Status != compare.Unchanged {
		t.Errorf("revision 1 against itself at revision %d: %s (%s), want unchanged", report.Revision, c.Status, c.Conclusion)
	}
	for _, sc := range c.Scopes() {
		if sc.Change != compare.ChangeSame {
			t.Errorf("%s: %s, want the same", sc.Scope, sc.Change)
		}
	}
}

// TestCompareDocumentRevisions: a comparison says its revision, and one of
// revision 1 (without revision, min_p, requests_to_tell) still validates
// against the schema, which requires nothing a revision added.
func TestCompareDocumentRevisions(t *testing.T) {
	doc := cmpfix.CompareJSON(t, cmpfix.GoldenComparison(t))
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	if m["revision"] != float64(compare.Revision) {
		t.Errorf("revision %v, want %d", m["revision"], compare.Revision)
	}
	old := docfix.EditJSON(t, doc, func(m map[string]any) {
		delete(m, "revision")
		var strip func(v any)
		strip = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				delete(v, "min_p")
				delete(v, "requests_to_tell")
				for _, x := range v {
					strip(x)
				}
			case []any:
				for _, x := range v {
					strip(x)
				}
			}
		}
		strip(m)
	})
	if bytes.Contains(old, []byte("min_p")) {
		t.Fatal("min_p left in the revision-1 document")
	}
	docfix.CheckSchema(t, docfix.KindCompare, old)
}
