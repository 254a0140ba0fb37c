package compare_test

import (
	"os"
	"testing"

	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/report"
	"github.com/pinprobe/pinprobe/report/compare"
)

// TestCompareRevisions: a report written before revisions (revision 1)
// compares with the same run written again by this pinprobe (this
// revision) as nothing changed: each side is read at its own revision,
// and what one revision lacks is not a change.
func TestCompareRevisions(t *testing.T) {
	data, err := os.ReadFile("../testdata/revision1-demo.json")
	if err != nil {
		t.Fatal(err)
	}
	old, err := report.ParseReport(data, "old.json")
	if err != nil {
		t.Fatal(err)
	}
	now := fixture.RoundTrip(t, old, "now.json")
	if old.Revision != 0 || now.Revision != report.Revision {
		t.Fatalf("revisions %d and %d, want 0 (none) and %d", old.Revision, now.Revision, report.Revision)
	}
	c := compare.Compare(old, now)
	if c.Status != compare.CompareUnchanged {
		t.Errorf("revision 1 against itself at revision %d: %s (%s), want unchanged", report.Revision, c.Status, c.Conclusion)
	}
	for _, sc := range c.Scopes() {
		if sc.Change != compare.ChangeSame {
			t.Errorf("%s: %s, want the same", sc.Scope, sc.Change)
		}
	}
}
