package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinprobe/pinprobe/internal/cmpfix"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
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
		file  string
		write func(*bytes.Buffer) error
	}{
		// The report's own tests read this one as saved (docfix.SavedGolden).
		{"../../report/testdata/golden.json", func(b *bytes.Buffer) error { return report.JSON(b, fixture.GoldenReport(t)) }},
		{"../../report/testdata/not-probed.json", func(b *bytes.Buffer) error { return report.JSON(b, notProbedReport(t)) }},
		{"report-hostile.json", func(b *bytes.Buffer) error { return report.JSON(b, fixture.HostileReport(t)) }},
		{"report-abandoned.json", func(b *bytes.Buffer) error { return report.JSON(b, fixture.AbandonedRun(t)) }},
		{"report-vantages.json", func(b *bytes.Buffer) error { return report.JSON(b, fixture.VantageMerge(t)) }},
		{"compare-golden.json", func(b *bytes.Buffer) error { return compare.JSON(b, cmpfix.GoldenComparison(t)) }},
	}
	for _, d := range docs {
		t.Run(filepath.Base(d.file), func(t *testing.T) {
			var buf bytes.Buffer
			if err := d.write(&buf); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", d.file+".golden")
			if strings.HasPrefix(d.file, "../") {
				golden = filepath.Join("testdata", d.file)
			}
			if *docfix.Update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from %s (rerun with -update if the change is intended)", d.file, golden)
			}
		})
	}
}
