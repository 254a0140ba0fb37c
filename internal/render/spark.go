package render

import "strings"

// sparkLevels draw a failure ratio from 0 (▁) to 1 (█).
var sparkLevels = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws one character per bucket of failed/requests, merging
// adjacent buckets so the line is at most width characters; a bucket with no
// request is a space. It returns the line and how many buckets each
// character covers.
func Sparkline(requests, failed []int64, width int) (string, int) {
	per := 1
	for width > 0 && (len(requests)+per-1)/per > width {
		per++
	}
	var b strings.Builder
	for i := 0; i < len(requests); i += per {
		var n, f int64
		for j := i; j < min(i+per, len(requests)); j++ {
			n += requests[j]
			if j < len(failed) {
				f += failed[j]
			}
		}
		if n == 0 {
			b.WriteByte(' ')
			continue
		}
		// A saved report whose buckets fail more than they hold is refused
		// when read; the clamp keeps a hand-made one from indexing past █.
		level := min(max(int(float64(f)/float64(n)*float64(len(sparkLevels)-1)), 0), len(sparkLevels)-1)
		if f > 0 && level == 0 {
			level = 1 // any failure shows
		}
		b.WriteRune(sparkLevels[level])
	}
	return b.String(), per
}
