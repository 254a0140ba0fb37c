package render_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/compare"
	"github.com/pinprobe/pinprobe/internal/docfix"
	"github.com/pinprobe/pinprobe/internal/fixture"
	"github.com/pinprobe/pinprobe/internal/judge"
	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/report"
)

// hostileShapes are saved reports shaped to cost the most to read for their
// size, each from the report of one endpoint (base), with 1/div of the
// elements that make them hostile.
func hostileShapes(t *testing.T, div int) map[string][]byte {
	base := fixture.ManyEndpoints(t, 1, "aaaaaaaa")
	splice := func(old, repeated string, n int) []byte {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			if strings.Contains(repeated, "%") {
				fmt.Fprintf(&b, repeated, i, i>>16, (i>>8)&255, i&255)
			} else {
				b.WriteString(repeated)
			}
		}
		out := bytes.Replace(base, []byte(strings.Replace(old, "@", "", 1)), []byte(strings.Replace(old, "@", b.String(), 1)), 1)
		if bytes.Equal(out, base) {
			t.Fatalf("no %q in the base report", old)
		}
		return out
	}
	bombEnc, n := docfix.LatencyBomb(t)
	group := fmt.Sprintf(`{"header":"h%%[1]d","value":"v","requests":%d,"ok":%d,"failed":0,"failure_rate":0,"dropped":0,"rps":0,"bytes":0,"status":{"200":%d},"errors":{},"latency_ms":{"min":0,"mean":0,"p50":0,"p90":0,"p99":0,"p999":0,"max":0},"hdr":%q,"addresses":{},"failed_by_address":{}}`, n, n, n, bombEnc)
	many := 100000 / div
	return map[string][]byte{
		"empty endpoints":   []byte(`{"schema": "pinprobe.report/v1", "endpoints": [` + strings.Repeat("{}, ", many) + `{}]}`),
		"null samples":      splice(`"samples": [@]`, `null`, many),
		"many endpoints":    fixture.ManyEndpoints(t, 1000/div, "bbbbbbbb"),
		"error classes":     splice(`"errors": {@}`, `"e%[1]d": 0`, many),
		"dns answers":       splice(`"addresses": [@],`, `"10.%[2]d.%[3]d.%[4]d"`, many),
		"groups":            splice(`"groups": [@]`, `{"header":"h%[1]d","value":"v","requests":0,"ok":0,"failed":0,"failure_rate":0,"dropped":0,"rps":0,"bytes":0,"status":{},"errors":{},"latency_ms":{"min":0,"mean":0,"p50":0,"p90":0,"p99":0,"p999":0,"max":0},"hdr":"","addresses":{},"failed_by_address":{}}`, 20000/div),
		"zlib bombs":        splice(`"groups": [@]`, group, 2000/div),
		"families":          bytes.Replace(base, []byte(`"families": {`), []byte(`"families": {`+strings.Repeat(`"f0": {}, `, many)), 1),
		"empty time strata": splice(`"groups": [@]`, `{"header":"h","value":"v","requests":0,"ok":0,"failed":0,"failure_rate":0,"dropped":0,"rps":0,"bytes":0,"status":{},"errors":{},"latency_ms":{"min":0,"mean":0,"p50":0,"p90":0,"p99":0,"p999":0,"max":0},"hdr":"","addresses":{},"failed_by_address":{},"times":[`+strings.Repeat(`{},`, many)+`{}]}`, 1),
	}
}

// TestReadMemoryOfHostileShapes: whatever a saved report holds (arrays of
// empty or null elements, hundreds of thousands of map keys, thousands of
// groups, histograms that inflate far past their weight: refused), reading
// it allocates at most 40 times its size (and 1 MiB), and judging and
// rendering it as much again. Under the race detector nothing is measured
// and the shapes are built at 1/check.RaceScale of their size.
func TestReadMemoryOfHostileShapes(t *testing.T) {
	div := 1
	if check.Race {
		div = check.RaceScale
	}
	for name, doc := range hostileShapes(t, div) {
		size := uint64(len(doc))
		var r *report.Report
		var err error
		if n := check.Allocated(func() { r, err = report.Read(bytes.NewReader(doc), "shape.json") }); n > 40*size+1<<20 {
			t.Errorf("%s: reading %d bytes allocated %d (%.0f times); want at most 40 times and 1 MiB", name, size, n, float64(n)/float64(size))
		}
		refused := map[string]string{"empty endpoints": `endpoint "{}": too short to hold one`, "null samples": `sample "null": too short to hold one`,
			"families": `families: "f0" is not an address family`, "empty time strata": `group time stratum "{}": too short to hold one`}[name]
		if refused != "" || err != nil {
			if err == nil || !strings.Contains(err.Error(), refused) {
				t.Errorf("%s: Read = %v; want it refused: %q", name, err, refused)
			}
			continue
		}
		if n := check.Allocated(func() {
			r.Verdict = judge.Judge(r, judge.LevelOf(r))
			render.Text(render.Options{})(io.Discard, r)
		}); n > 40*size+8<<20 {
			t.Errorf("%s: judging and rendering %d bytes allocated %d (%.0f times); want at most 40 times and 8 MiB", name, size, n, float64(n)/float64(size))
		}
		start := time.Now()
		if n := check.Allocated(func() {
			render.Must(render.CompareForFormat("text", render.Options{}))(io.Discard, compare.Reports(r, r))
		}); n > 40*size+8<<20 {
			t.Errorf("%s: comparing %d bytes with itself allocated %d (%.0f times); want at most 40 times and 8 MiB", name, size, n, float64(n)/float64(size))
		}
		t.Logf("%s: %d bytes compared with itself in %v", name, size, time.Since(start))
	}
}
