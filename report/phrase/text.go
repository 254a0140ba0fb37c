package phrase

import (
	"strconv"
)

// latency formats milliseconds with about three significant digits.
func Latency(v float64, n int64) string {
	switch {
	case n == 0:
		return "-"
	case v >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + "s"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64) + "ms"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64) + "ms"
	default:
		return strconv.FormatFloat(v, 'f', 2, 64) + "ms"
	}
}

func Num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
