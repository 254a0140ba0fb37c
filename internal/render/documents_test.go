package render_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/cmpfix"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestDocumentsGolden: the saved documents of the fixtures' runs — the
// golden report, a hostile one, a run with abandoned requests, a merge of
// vantages, the golden comparison — are byte for byte what they were. The
// text, Markdown and HTML goldens hold what people read; these hold what
// other pinprobes read, so that moving code cannot change a figure unseen
// (rerun with -update when a change is intended, and say it).
func TestDocumentsGolden(t *testing.T) {
	docs := []struct {
		file, doc string
	}{
		// The report's own tests read this one as saved (docfix.SavedGolden).
		{"../../report/testdata/golden.json", render.Written(t, report.JSON, fixture.GoldenReport(t))},
		{"../../report/testdata/not-probed.json", render.Written(t, report.JSON, notProbedReport(t))},
		{"report-hostile.json", render.Written(t, report.JSON, fixture.HostileReport(t))},
		{"report-abandoned.json", render.Written(t, report.JSON, fixture.AbandonedRun(t))},
		{"report-vantages.json", render.Written(t, report.JSON, fixture.VantageMerge(t))},
		{"compare-golden.json", render.Written(t, compare.JSON, cmpfix.GoldenComparison(t))},
	}
	for _, d := range docs {
		t.Run(filepath.Base(d.file), func(t *testing.T) {
			golden := filepath.Join("testdata", d.file+".golden")
			if strings.HasPrefix(d.file, "../") {
				golden = filepath.Join("testdata", d.file)
			}
			render.CheckGolden(t, golden, d.doc)
		})
	}
}
