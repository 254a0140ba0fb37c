package report

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultFailStatus is --fail-status when it is not given: every 5xx
// answer is a failure.
const DefaultFailStatus = "5xx"

// FailStatus is the set of HTTP statuses that count as failures.
type FailStatus struct {
	set  [1000]bool
	spec string
}

// ParseFailStatus parses a comma-separated list of classes ("5xx"), single
// statuses ("429") and ranges ("500-503").
func ParseFailStatus(spec string) (FailStatus, error) {
	var f FailStatus
	f.spec = spec
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(strings.ToLower(item))
		if item == "" {
			return FailStatus{}, fmt.Errorf("%q: empty item", Shown(spec))
		}
		lo, hi, err := statusRange(item)
		if err != nil {
			return FailStatus{}, fmt.Errorf("%q: %w", Shown(item), err)
		}
		for c := lo; c <= hi; c++ {
			f.set[c] = true
		}
	}
	return f, nil
}

func statusRange(item string) (lo, hi int, err error) {
	if len(item) == 3 && strings.HasSuffix(item, "xx") && item[0] >= '1' && item[0] <= '5' {
		d := int(item[0] - '0')
		return d * 100, d*100 + 99, nil
	}
	a, b, isRange := strings.Cut(item, "-")
	if lo, err = statusCode(a); err != nil {
		return 0, 0, err
	}
	hi = lo
	if isRange {
		if hi, err = statusCode(b); err != nil {
			return 0, 0, err
		}
		if hi < lo {
			return 0, 0, fmt.Errorf("empty range")
		}
	}
	return lo, hi, nil
}

func statusCode(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 100 || n > 599 {
		return 0, fmt.Errorf("want a status 100-599, a class like 5xx, or a range like 500-503")
	}
	return n, nil
}

// Fails reports whether status counts as a failure.
func (f *FailStatus) Fails(status int) bool {
	return status >= 0 && status < len(f.set) && f.set[status]
}

// Equal reports whether f and o count the same statuses as failures.
func (f FailStatus) Equal(o FailStatus) bool { return f.set == o.set }

// Failed decides whether a request failed: it got no response (a transport
// error), or its status counts as a failure. It is the one place the
// question is answered; the engine asks it of every result.
func (f *FailStatus) Failed(status int, transportErr bool) bool {
	return transportErr || f.Fails(status)
}

// String returns the spec it was parsed from.
func (f *FailStatus) String() string { return f.spec }

// Ranges returns the statuses that count as failures as inclusive ranges,
// in order: 5xx,429 is [[429 429] [500 599]].
func (f FailStatus) Ranges() [][2]int {
	var out [][2]int
	for lo := 100; lo <= 599; lo++ {
		if !f.Fails(lo) {
			continue
		}
		hi := lo
		for hi+1 <= 599 && f.Fails(hi+1) {
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}
