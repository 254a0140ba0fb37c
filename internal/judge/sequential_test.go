package judge

import (
	"math/rand/v2"
	"testing"

	"github.com/pinprobe/pinprobe/internal/check"
	"github.com/pinprobe/pinprobe/internal/stat"
)

func TestLookAlpha(t *testing.T) {
	tests := []struct {
		alpha    float64
		maxLooks int
		last     bool
		want     float64
	}{
		{0.001, 0, false, 0.001},
		{0.001, 1, true, 0.001},
		{0.001, 2, false, 0.0005},
		{0.001, 2, true, 0.0005},
		{0.001, 301, false, 0.001 / 600},
		{0.001, 301, true, 0.0005},
	}
	for _, tt := range tests {
		if got := LookAlpha(tt.alpha, tt.maxLooks, tt.last); got != tt.want {
			t.Errorf("LookAlpha(%v, %d, %v) = %v; want %v", tt.alpha, tt.maxLooks, tt.last, got, tt.want)
		}
	}
	// The looks of a run that goes the distance spend exactly alpha.
	for _, k := range []int{2, 10, 300} {
		sum := LookAlpha(0.001, k, true)
		for range k - 1 {
			sum += LookAlpha(0.001, k, false)
		}
		if sum > 0.001*(1+1e-12) {
			t.Errorf("%d looks spend %v; want at most 0.001", k, sum)
		}
	}
}

// A run judged every second on healthy data (two addresses failing alike)
// stops on a false alarm at most alpha of the time with LookAlpha, and
// well above alpha when each look uses the single-look level.
func TestLookAlphaControlsRepeatedLooks(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	const (
		runs     = 2000 / check.RaceScale
		looks    = 60
		perLook  = 20 // requests per address per second
		failProb = 0.05
		m        = 2 // tests per look: each address against the other
	)
	alphas := []float64{0.05, 0.01}
	stopped, naive := make([]int, len(alphas)), make([]int, len(alphas))
	for range runs {
		var f, n [2]int64
		stop, naiveStop := make([]bool, len(alphas)), make([]bool, len(alphas))
		for look := 1; look <= looks; look++ {
			for e := range 2 {
				n[e] += perLook
				f[e] += binomial(rng, perLook, failProb)
			}
			for e := range 2 {
				p := stat.FisherGreater(f[e], n[e], f[1-e], n[1-e])
				for i, alpha := range alphas {
					stop[i] = stop[i] || p < LookAlpha(alpha, looks, look == looks)/m
					naiveStop[i] = naiveStop[i] || p < alpha/m
				}
			}
		}
		for i := range alphas {
			if stop[i] {
				stopped[i]++
			}
			if naiveStop[i] {
				naive[i]++
			}
		}
	}
	for i, alpha := range alphas {
		rate, naiveRate := float64(stopped[i])/runs, float64(naive[i])/runs
		t.Logf("α=%v, %d looks: false stops %d/%d (%.4f) with LookAlpha; %d/%d (%.4f) with α at every look",
			alpha, looks, stopped[i], runs, rate, naive[i], runs, naiveRate)
		if lim := check.BinomialUpper(runs, alpha, 0.001); stopped[i] > lim {
			t.Errorf("α=%v: %d false stops of %d; want at most %d", alpha, stopped[i], runs, lim)
		}
		if naiveRate <= alpha {
			t.Errorf("α=%v: looking %d times at α stopped falsely in %.4f; the test no longer shows why LookAlpha exists", alpha, looks, naiveRate)
		}
	}
}
