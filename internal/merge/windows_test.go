package merge_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/merge"
	"github.com/pinprobe/pinprobe/internal/report"
)

// windowsOf are three windows of one watch (run 0a1b2c3d), one after the
// other, each counting its own request IDs.
func windowsOf(t *testing.T) []*report.Report {
	var ws []*report.Report
	for i := range 3 {
		w := docfix.RoundTrip(t, docfix.SavedGolden(t), "w.json")
		d := w.EndedAt.Sub(w.StartedAt.Time)
		w.RunID, w.Part = "0a1b2c3d", true
		w.StartedAt, w.EndedAt = report.Time{Time: w.StartedAt.Add(d * time.Duration(i))}, report.Time{Time: w.StartedAt.Add(d * time.Duration(i+1))}
		for j := range w.Endpoints {
			first := int64(100*i + 1)
			w.Endpoints[j].IDRanges = []report.IDRange{{First: first, Last: first + 98}}
		}
		ws = append(ws, w)
	}
	return ws
}

// TestWindowsMerge: windows of one watch share their run ID and are not
// the same run: they merge, each input marked a part, and each merged
// endpoint counts the union of their request IDs. The same window given
// twice is still refused; windows of two watches merge with a note that
// pinprobe logs cannot keep the watches' other windows apart.
func TestWindowsMerge(t *testing.T) {
	ws := windowsOf(t)
	m, err := fixture.MergeJudged(ws, []string{"a.json", "b.json", "c.json"})
	if err != nil {
		t.Fatalf("three windows of one watch: %v", err)
	}
	if slices.ContainsFunc(m.Inputs, func(in report.Input) bool { return !in.Part }) || !m.Part || len(m.Notes) != 0 {
		t.Errorf("inputs %+v, part %v, notes %q; want every input a part, the merge one too, and no note", m.Inputs, m.Part, m.Notes)
	}
	want := []report.IDRange{{First: 1, Last: 99}, {First: 101, Last: 199}, {First: 201, Last: 299}}
	if got := m.Endpoints[0].IDRanges; !slices.Equal(got, want) {
		t.Errorf("merged ranges %v; want %v", got, want)
	}
	// A window that counted no request is a part all the same.
	empty := windowsOf(t)[2]
	for j := range empty.Endpoints {
		empty.Endpoints[j].IDRanges = nil
	}
	if _, err := fixture.MergeJudged([]*report.Report{ws[0], empty}, []string{"a.json", "empty.json"}); err != nil {
		t.Errorf("a window and an empty one of the same watch: %v", err)
	}
	var same *merge.SameRunError
	if _, err := fixture.MergeJudged([]*report.Report{ws[0], ws[0]}, []string{"a.json", "a.json"}); !errors.As(err, &same) {
		t.Errorf("a window given twice: %v; want the same run refused", err)
	}
	other := windowsOf(t)[1]
	other.RunID = "4567ef01"
	m, err = fixture.MergeJudged([]*report.Report{ws[0], other}, []string{"a.json", "other.json"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Endpoints[0].IDRanges != nil || len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "windows of a watch, and not all of one watch") {
		t.Errorf("windows of two watches: ranges %v, notes %q; want none, and a note", m.Endpoints[0].IDRanges, m.Notes)
	}
}
