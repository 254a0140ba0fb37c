package render

import "testing"

func TestSparkline(t *testing.T) {
	tests := []struct {
		req, fail []int64
		width     int
		want      string
		per       int
	}{
		{[]int64{10, 10, 10, 0, 10}, []int64{0, 10, 5, 0, 1}, 60, "▁█▄ ▂", 1},
		{[]int64{10, 10, 10, 10}, []int64{10, 10, 0, 0}, 2, "█▁", 2},
		{[]int64{1, 1, 1}, []int64{0, 0, 1}, 2, "▁█", 2},
		{nil, nil, 60, "", 1},
		// Hand-made buckets that fail more than they hold, or lack their
		// failures, draw within the scale instead of panicking.
		{[]int64{1, 2}, []int64{5, 0}, 60, "█▁", 1},
		{[]int64{4, 4}, []int64{4}, 60, "█▁", 1},
	}
	for _, tt := range tests {
		got, per := Sparkline(tt.req, tt.fail, tt.width)
		if got != tt.want || per != tt.per {
			t.Errorf("Sparkline(%v, %v, %d) = %q, %d; want %q, %d", tt.req, tt.fail, tt.width, got, per, tt.want, tt.per)
		}
	}
}
