package accesslog

import (
	"strings"
	"testing"
	"time"
)

// TestAdversarialLinesAreCheap: lines of 60 KB made of what the matcher
// backtracks over (colons after an address, spaces, quotes, digits) cost
// about what short lines do, in every format: a log of them streams at
// disk speed, not in quadratic time (3 such lines took 1.1 s before the
// shapes bounded their values; now about 2 ms).
func TestAdversarialLinesAreCheap(t *testing.T) {
	for _, unit := range []string{":", " ", "1", "1.", "::1:", "[", "\"", "- ", "1/", "{", "a,", "\"a\","} {
		for _, o := range []Options{{}, {Kind: HAProxy}, {Format: `$remote_addr:$remote_port [$time_local] "$request" $status up=$upstream_addr us=$upstream_status`}, {Format: `%ci:%cp [%tr] %ft %b/%s %si:%sp %ST %{+Q}r`}} {
			line := strings.Repeat(unit, 60000/len(unit))
			log := strings.Repeat(line+"\n", 3)
			start := time.Now()
			r, err := Open(strings.NewReader(log), o)
			if err == nil {
				var rec Record
				for r.Next(&rec) == nil {
				}
			}
			if d := time.Since(start); d > 300*time.Millisecond {
				t.Errorf("3 lines of %q ×%d, options %+v: %v; want well under 300ms", unit, 60000/len(unit), o, d)
			}
		}
	}
}
