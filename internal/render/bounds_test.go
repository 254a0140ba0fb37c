package render

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/report"
)

// TestRenderManyEndpoints: every format and a comparison of a report of
// thousands of endpoints allocate a small multiple of the report, not its
// square (each URL shortened once, not against every other target).
func TestRenderManyEndpoints(t *testing.T) {
	// Under the race detector nothing is measured (see allocated), and
	// building and reading the report of 2000 endpoints is most of the
	// time it takes there: fewer endpoints still take every renderer over
	// many.
	endpoints := 2000
	if check.Race {
		endpoints /= check.RaceScale
	}
	doc := fixture.ManyEndpoints(t, endpoints, "aaaaaaaa")
	r, err := report.Read(bytes.NewReader(doc), "many.json")
	if err != nil {
		t.Fatal(err)
	}
	allocated := func(f func()) uint64 {
		if check.Race { // its sync.Pool drops what it holds
			f()
			return 0
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for _, format := range []string{"text", "markdown", "html"} {
		render := Must(ForFormat(format, Options{}))
		if n := allocated(func() { err = render(io.Discard, r) }); n > 20*uint64(len(doc)) {
			t.Errorf("%s of %d endpoints (%d bytes) allocated %d bytes; want at most 20 times the report", format, len(r.Endpoints), len(doc), n)
		}
		if err != nil {
			t.Errorf("%s: %v", format, err)
		}
	}
	if n := allocated(func() { err = Must(CompareForFormat("text", Options{}))(io.Discard, compare.Reports(r, r)) }); n > 20*uint64(len(doc)) {
		t.Errorf("compare of %d endpoints allocated %d bytes; want at most 20 times the report", len(r.Endpoints), n)
	}
	if err != nil {
		t.Errorf("compare: %v", err)
	}
}
