package probe

import (
	"testing"
	"time"
)

func TestAutoConcurrency(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64 // per endpoint
		timeout   time.Duration
		endpoints int
		fdSoft    uint64
		want      int
	}{
		{"every request may take the timeout", 10, 10 * time.Second, 3, 1 << 20, 101},
		{"a fraction rounds up", 0.5, 3 * time.Second, 1, 1 << 20, 3},
		{"slow rate, short timeout", 1, 100 * time.Millisecond, 1, 1 << 20, 2},
		{"hard cap", 5000, 10 * time.Second, 1, 1 << 20, MaxConcurrency},
		{"no descriptor limit known", 5000, 10 * time.Second, 1, 0, MaxConcurrency},
		{"descriptors shared by endpoints", 100, 10 * time.Second, 10, 1024, 96},     // (1024-64)/10
		{"descriptors for one", 1000, 10 * time.Second, 1, 1024, 960},                // 1024-64
		{"fewer descriptors than the reserve", 100, 10 * time.Second, 1, 50, 1},      // at least one
		{"more endpoints than descriptors", 100, 10 * time.Second, 5000, 1 << 12, 1}, // at least one
		{"no rate", 0, 10 * time.Second, 1, 1024, 960},
	}
	for _, tt := range tests {
		if got := AutoConcurrency(tt.rate, tt.timeout, tt.endpoints, tt.fdSoft); got != tt.want {
			t.Errorf("%s: AutoConcurrency(%v, %v, %d, %d) = %d; want %d", tt.name, tt.rate, tt.timeout, tt.endpoints, tt.fdSoft, got, tt.want)
		}
	}
}
