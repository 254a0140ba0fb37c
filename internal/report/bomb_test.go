package report_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestLatencyBombSaved: the latency bomb the hostile-shape tests of the
// layers above read as saved (docfix.LatencyBomb) is report.LatencyBomb's.
func TestLatencyBombSaved(t *testing.T) {
	enc, n := report.LatencyBomb()
	want := fmt.Sprintf("%d\n%s\n", n, enc)
	const file = "testdata/latency-bomb.txt"
	if *docfix.Update {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not report.LatencyBomb's (rerun with -update)", file)
	}
}
