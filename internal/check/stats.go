package check

import (
	"math"
)

func Near(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}
