package judge

import (
	"math"
	"math/bits"
	"sort"

	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/stat"
)

// ConnCounts is one group's requests and failures, the input of
// ClusterTest: the instance a response header names, a time bucket.
type ConnCounts struct {
	ID       uint64
	Requests int64
	Failed   int64
}

// RecordCounts returns the kept records of c (not the overflow nor the
// unconnected requests) as ClusterTest input, for its account of which
// connections fail; its p is not valid for connections (see ClusterTest).
func RecordCounts(c *report.Conns) []ConnCounts {
	out := make([]ConnCounts, len(c.Records))
	for i, r := range c.Records {
		out[i] = ConnCounts{ID: r.ID, Requests: r.Requests, Failed: r.Failed}
	}
	return out
}

// ClusterTest methods: how ClusterResult.P was computed.
const (
	ClusterNone       = "none"        // nothing to test: p is 1
	ClusterExact      = "exact"       // the exact conditional distribution
	ClusterMonteCarlo = "monte-carlo" // random permutations, fixed seed
	ClusterChiSquare  = "chi-square"  // large counts: the chi-square distribution
	ClusterBound      = "bound"       // too small for permutations: PBound
)

// ClusterResult says whether failures cluster on some groups (connections,
// instances) more than independent failures would.
type ClusterResult struct {
	Connections int   `json:"connections"` // groups tested: those with a request
	Requests    int64 `json:"requests"`
	Failed      int64 `json:"failed"`
	// FailingConnections is how many groups carry at least one failure;
	// ExpectedFailing how many would, on average, if the same failures fell
	// independently of the group: "failures on 1 of 4 instances (3.9
	// expected)".
	FailingConnections int     `json:"failing_connections"`
	ExpectedFailing    float64 `json:"expected_failing"`
	// ChiSquare is Pearson's statistic of homogeneity, with Connections-1
	// degrees of freedom; Dispersion is it over its degrees of freedom:
	// about 1 when failures are independent, above 1 when they cluster.
	ChiSquare  float64 `json:"chi_square"`
	Dispersion float64 `json:"dispersion"`
	// P is the one-sided p-value: the probability, were every request to
	// fail independently with the same probability, of failures at least
	// this clustered. PBound is an analytic upper bound of the exact p,
	// computed when the evidence is strong (else 1); P is never above it.
	P      float64 `json:"p"`
	PBound float64 `json:"p_bound"`
	Method string  `json:"method"`
	// Permutations is how many random permutations were drawn (Monte
	// Carlo only); MinP is the smallest p the method could have given:
	// with a P at MinP, say "p≤MinP", not "p=MinP".
	Permutations int     `json:"permutations"`
	MinP         float64 `json:"min_p"`
	// Failing lists the groups with failures, by failure rate then
	// failure count, both highest first, then by ID.
	Failing []uint64 `json:"failing"`
}

// Significant reports whether the failures cluster at level alpha.
func (r ClusterResult) Significant(alpha float64) bool { return r.P < alpha }

// Tuning of ClusterTest.
const (
	// clusterPerms is the most random permutations drawn: p down to
	// 1/(clusterPerms+1), 5e-5, is resolved.
	clusterPerms = 20000
	// clusterStopHits ends the permutations early once that many were at
	// least as clustered as the data (Besag and Clifford's sequential
	// Monte Carlo p-value, hits/drawn): a p far above any threshold is
	// known to ±10% after 100/p permutations.
	clusterStopHits = 100
	// clusterWork bounds the permutations' work, in failures placed.
	clusterWork = 6_000_000
	// exactWork bounds the exact computation, in DP cell updates.
	exactWork = 3_000_000
	// boundWork bounds the analytic bound, in probability terms summed;
	// it is computed only when the chi-square law puts p below
	// boundWorthIt.
	boundWork    = 4_000_000
	boundWorthIt = 1e-3
	// mcMaxRequests bounds the requests the permutations label, one int32
	// each: 64 MB. A scope of more (a run of billions, or a forged
	// report's) is judged by the chi-square law or the bound.
	mcMaxRequests = 1 << 24
	clusterSeed   = 0x70696e70726f6265 // "pinprobe"
	// minReportedP is the smallest p reported: smaller ones underflow
	// float64 on the way, and a p of 0 would claim the impossible.
	minReportedP = 1e-300
)

// clusterOpts exist for the tests, which force a method or shrink B.
type clusterOpts struct {
	method   string // "" chooses
	perms    int
	stopHits int
	seed     uint64
}

// ClusterTest tests whether failures concentrate on some groups beyond chance,
// H0 being that every request fails independently with one probability: the
// failures are then a uniformly random subset, so the test is exact. S = Σ k²/n
// (Pearson's chi-square); p exactly by dynamic programming when cheap, else by
// seeded permutations (same input, same p), else by the chi-square law with a
// Chernoff bound below 1e-3. Groups must be fixed before the outcomes (an
// instance, a time bucket), not connections, whose length depends on their
// failures (see RepeatTest). Failures are clamped to [0, requests]; with fewer
// than two groups, no failure, no success or one request a group, p is 1.
func ClusterTest(conns []ConnCounts) ClusterResult {
	return clusterTest(conns, clusterOpts{perms: clusterPerms, stopHits: clusterStopHits, seed: clusterSeed})
}

func clusterTest(conns []ConnCounts, o clusterOpts) ClusterResult {
	res := ClusterResult{P: 1, PBound: 1, Method: ClusterNone, MinP: 1, Failing: []uint64{}}
	cs := make([]ConnCounts, 0, len(conns))
	maxN := int64(0)
	for _, c := range conns {
		if c.Requests <= 0 {
			continue
		}
		c.Failed = min(max(c.Failed, 0), c.Requests)
		cs = append(cs, c)
		res.Requests += c.Requests
		res.Failed += c.Failed
		maxN = max(maxN, c.Requests)
	}
	res.Connections = len(cs)
	res.Failing = failingIDs(cs)
	res.FailingConnections = len(res.Failing)
	N, K := res.Requests, res.Failed
	if len(cs) < 2 || K == 0 || K == N || maxN == 1 {
		if len(cs) > 0 {
			res.ExpectedFailing = expectedFailing(cs, N, K)
		}
		return res
	}
	// A canonical order: the answer does not depend on the input's.
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Requests != cs[j].Requests {
			return cs[i].Requests < cs[j].Requests
		}
		return cs[i].Failed < cs[j].Failed
	})
	n := make([]int64, len(cs))
	k := make([]int64, len(cs))
	s := 0.0
	for i, c := range cs {
		n[i], k[i] = c.Requests, c.Failed
		s += float64(c.Failed) * float64(c.Failed) / float64(c.Requests)
	}
	p := float64(K) / float64(N)
	res.ChiSquare = stat.Round((s-float64(K)*p)/(p*(1-p)), 6)
	res.Dispersion = stat.Round(res.ChiSquare/float64(len(cs)-1), 6)
	res.ExpectedFailing = expectedFailing(cs, N, K)
	// The bound only helps with strong evidence; the chi-square law says
	// cheaply whether there is any, and spares healthy data its cost.
	if gammaQ(float64(len(cs)-1)/2, res.ChiSquare/2) < boundWorthIt {
		res.PBound = clusterBound(n, k, N, K, s)
	}

	method, perms := o.method, o.perms
	if method == "" {
		method, perms = clusterMethod(n, N, K, s, res.PBound, perms)
	}
	res.Method = method
	switch method {
	case ClusterExact:
		res.P, res.MinP = exactClusterP(n, k, N, K), 0
	case ClusterBound:
		res.P, res.MinP = res.PBound, 0
	case ClusterChiSquare:
		res.P, res.MinP = gammaQ(float64(len(cs)-1)/2, res.ChiSquare/2), 0
	case ClusterMonteCarlo:
		res.P, res.Permutations = mcClusterP(n, N, K, s, perms, o.stopHits, o.seed)
		res.MinP = 1 / float64(perms+1)
	}
	// The bound holds for the exact p, which the estimates approximate.
	// Below minReportedP a p underflows; it reads as that floor.
	res.P = max(min(res.P, res.PBound, 1), minReportedP)
	return res
}

// failingIDs are the connections of cs that failed, by failure rate,
// then failures, highest first, then ID.
func failingIDs(cs []ConnCounts) []uint64 {
	failing := make([]ConnCounts, 0, len(cs))
	for _, c := range cs {
		if c.Failed > 0 {
			failing = append(failing, c)
		}
	}
	sort.Slice(failing, func(i, j int) bool {
		a, b := failing[i], failing[j]
		if x, y := float64(a.Failed)*float64(b.Requests), float64(b.Failed)*float64(a.Requests); x != y {
			return x > y
		}
		if a.Failed != b.Failed {
			return a.Failed > b.Failed
		}
		return a.ID < b.ID
	})
	ids := make([]uint64, 0, len(failing))
	for _, c := range failing {
		ids = append(ids, c.ID)
	}
	return ids
}

// clusterMethod chooses how to compute p for connections of n requests
// (N in all, K failed, statistic s), given the bound pBound: exactly when
// that is cheap, the bound when it already beats what perms permutations
// can show, permutations within their budget, the chi-square law where
// Cochran's rule allows it, else the bound or more permutations. It
// returns the permutations to run.
func clusterMethod(n []int64, N, K int64, s, pBound float64, perms int) (string, int) {
	cost := int64(2*min(K, N-K) + 8)
	switch {
	case exactCost(n, K, s) <= exactWork:
		return ClusterExact, perms
	case pBound < 1/float64(perms+1):
		return ClusterBound, perms
	case cost*int64(perms) <= clusterWork && N <= mcMaxRequests:
		return ClusterMonteCarlo, perms
	case cochran(n, N, K):
		return ClusterChiSquare, perms
	case N > mcMaxRequests || cost > clusterWork:
		// Permutations would label every request, or take more than
		// their budget a thousand times over: the bound, which can only
		// overstate p (1 when it was not worth computing).
		return ClusterBound, perms
	}
	return ClusterMonteCarlo, int(max(clusterWork/cost, 1000))
}

// expectedFailing is the expected number of groups with a failure
// under H0: Σ 1 - P(k=0), with P(k=0) = C(N-n, K) / C(N, K).
func expectedFailing(cs []ConnCounts, N, K int64) float64 {
	e := 0.0
	all := stat.LogChoose(N, K)
	for _, c := range cs {
		e += 1 - math.Exp(stat.LogChoose(N-c.Requests, K)-all)
	}
	return stat.Round(e, 3)
}

// cochran reports whether every group expects at least one failure
// and one success, and at most a fifth of them fewer than five: Cochran's
// rule for the chi-square law to hold.
func cochran(n []int64, N, K int64) bool {
	p := float64(K) / float64(N)
	small := 0
	for _, ni := range n {
		e := min(float64(ni)*p, float64(ni)*(1-p))
		if e < 1 {
			return false
		}
		if e < 5 {
			small++
		}
	}
	return small*5 <= len(n)
}

// exactWeights returns the integer weights L/n of S·L = Σ (L/n) k², L the
// least common multiple of the sizes, or false when L is too large.
func exactWeights(n []int64) ([]int64, bool) {
	l := int64(1)
	for _, ni := range n {
		l = l / stat.GCD(l, ni) * ni
		if l > 1<<20 {
			return nil, false
		}
	}
	w := make([]int64, len(n))
	for i, ni := range n {
		w[i] = l / ni
	}
	return w, true
}

// exactCost estimates exactClusterP's cell updates.
func exactCost(n []int64, K int64, s float64) int64 {
	w, ok := exactWeights(n)
	if !ok {
		return math.MaxInt64
	}
	l := w[0] * n[0]
	sObs := int64(math.Round(s * float64(l)))
	per := (K + 1) * (sObs + 1)
	if per > exactWork {
		return math.MaxInt64
	}
	cost := int64(0)
	for _, ni := range n {
		cost += per * (min(ni, K) + 1)
		if cost > exactWork {
			return math.MaxInt64
		}
	}
	return cost
}

// exactClusterP is P(S ≥ s_obs) under the multivariate hypergeometric law,
// by dynamic programming over the groups: the state is the failures
// placed so far and the integer score Σ (L/n) k² so far, scores at or past
// the observed one merged into one absorbing cell. Connection i takes k of
// the K-j failures left with probability C(n_i,k) C(R-n_i, K-j-k) / C(R,
// K-j), R the requests left, so the mass always sums to 1.
func exactClusterP(n, k []int64, N, K int64) float64 {
	w, _ := exactWeights(n)
	var sObs int64
	for i := range n {
		sObs += w[i] * k[i] * k[i]
	}
	width := sObs + 1
	cur := make([]float64, (K+1)*width)
	nxt := make([]float64, (K+1)*width)
	cur[0] = 1
	lf := logFactorials(N)
	lc := func(a, b int64) float64 { return lf[a] - lf[b] - lf[a-b] }
	rem := N
	placed := int64(0) // most failures placed so far
	for i, ni := range n {
		clear(nxt)
		after := rem - ni
		for j := int64(0); j <= min(placed, K); j++ {
			row := cur[j*width : (j+1)*width]
			left := K - j
			lo, hi := max(0, left-after), min(ni, left)
			if lo > hi {
				continue
			}
			base := lc(rem, left)
			for x := lo; x <= hi; x++ {
				pr := math.Exp(lc(ni, x) + lc(after, left-x) - base)
				if pr == 0 {
					continue
				}
				add := w[i] * x * x
				out := nxt[(j+x)*width : (j+x+1)*width]
				for sc, v := range row {
					if v == 0 {
						continue
					}
					out[min(int64(sc)+add, sObs)] += v * pr
				}
			}
		}
		cur, nxt = nxt, cur
		rem = after
		placed += ni
	}
	return min(1, cur[K*width+sObs])
}

// logFactorials returns log(i!) for i in [0, n].
func logFactorials(n int64) []float64 {
	lf := make([]float64, n+1)
	for i := int64(2); i <= n; i++ {
		lf[i] = lf[i-1] + math.Log(float64(i))
	}
	return lf
}

// mcClusterP estimates P(S ≥ s) by drawing random subsets of K failed
// requests: a partial Fisher-Yates shuffle of the requests' group
// labels, min(K, N-K) swaps a permutation (the successes are drawn when
// fewer). It returns the Besag-Clifford p-value, hits/drawn once hits
// reaches stopHits, otherwise (hits+1)/(perms+1), and how many it drew.
func mcClusterP(n []int64, N, K int64, s float64, perms, stopHits int, seed uint64) (float64, int) {
	lab := make([]int32, 0, N)
	for i, ni := range n {
		for range ni {
			lab = append(lab, int32(i))
		}
	}
	kk := K
	thr := s
	if N-K < K {
		// Σ (n-x)²/n = N - 2(N-K) + Σ x²/n, x the successes.
		kk, thr = N-K, s-float64(2*K-N)
	}
	rng := splitmix{seed}
	draw := func() {
		for j := range kk {
			r := j + int64(rng.below(uint64(N-j)))
			lab[j], lab[r] = lab[r], lab[j]
		}
	}
	// One permutation's statistic is Σ w x² over the drawn labels, added
	// one label at a time: x² grows by 2x+1. Integer weights L/n when the
	// sizes allow, for speed and exact ties; else 1/n in floating point.
	if w, ok := exactWeights(n); ok {
		// The smallest integer score at least as clustered.
		return permHits(draw, lab[:kk], w, int64(math.Ceil(thr*float64(w[0]*n[0])-1e-6)), perms, stopHits)
	}
	inv := make([]float64, len(n))
	for i, ni := range n {
		inv[i] = 1 / float64(ni)
	}
	// Ties count as at least as clustered.
	return permHits(draw, lab[:kk], inv, thr-1e-9*(1+math.Abs(thr)), perms, stopHits)
}

// permHits draws up to perms permutations, each scored Σ w x² over the drawn
// labels lab, and returns mcClusterP's p of the scores at least t0, and how
// many it drew.
func permHits[T int64 | float64](draw func(), lab []int32, w []T, t0 T, perms, stopHits int) (float64, int) {
	x := make([]int64, len(w))
	hits := 0
	for b := 1; b <= perms; b++ {
		draw()
		var t T
		for _, c := range lab {
			t += w[c] * T(2*x[c]+1)
			x[c]++
		}
		for _, c := range lab {
			x[c] = 0
		}
		if t >= t0 {
			if hits++; hits >= stopHits {
				return float64(hits) / float64(b), b
			}
		}
	}
	return float64(hits+1) / float64(perms+1), perms
}

// clusterBound is a Chernoff upper bound of P(S ≥ s) under H0: the counts are
// independent Binomial(n_i, p = K/N) conditioned on their sum K, so for λ ≥ 0,
// μ and a cap c, P(S ≥ s) ≤ exp(-λs - μK) Π_i E[exp(λk_i²/n_i + μk_i); k_i ≤ c]
// / P(Bin(N,p) = K) + Σ_i P(k_i > c) (k_i hypergeometric in the sum), minimised
// over λ and μ (convex). The cap keeps the quadratic tilt off the binomial's far
// tail; caps double from the largest count until the tail term is the smaller.
// It returns 1 when not worth computing.
func clusterBound(n, k []int64, N, K int64, s float64) float64 {
	// Sizes with their multiplicities.
	var sizes, count []int64
	for _, ni := range n { // n is sorted
		if len(sizes) > 0 && sizes[len(sizes)-1] == ni {
			count[len(count)-1]++
			continue
		}
		sizes = append(sizes, ni)
		count = append(count, 1)
	}
	var maxK int64
	for _, ki := range k {
		maxK = max(maxK, ki)
	}
	var caps []int64
	for c := maxK; ; c *= 2 {
		if c >= sizes[len(sizes)-1] {
			caps = append(caps, sizes[len(sizes)-1])
			break
		}
		caps = append(caps, c)
	}
	terms := int64(0)
	for _, c := range caps {
		for _, sz := range sizes {
			terms += min(sz, c) + 1
		}
	}
	if terms*700 > boundWork {
		return 1
	}
	p := float64(K) / float64(N)
	lp, lq := math.Log(p), math.Log1p(-p)
	logDen := stat.LogChoose(N, K) + float64(K)*lp + float64(N-K)*lq
	all := stat.LogChoose(N, K)
	best := 1.0
	for _, c := range caps {
		// Σ_i P(k_i > c), k_i hypergeometric.
		tail := 0.0
		for g, sz := range sizes {
			for x := c + 1; x <= min(sz, K); x++ {
				tail += float64(count[g]) * math.Exp(stat.LogChoose(sz, x)+stat.LogChoose(N-sz, K-x)-all)
			}
		}
		if tail >= best {
			continue
		}
		logPMF := make([][]float64, len(sizes))
		for g, sz := range sizes {
			logPMF[g] = make([]float64, min(sz, c)+1)
			for x := range logPMF[g] {
				logPMF[g][x] = stat.LogChoose(sz, int64(x)) + float64(x)*lp + float64(sz-int64(x))*lq
			}
		}
		chern := math.Exp(chernoffSquares(sizes, count, logPMF, K, s) - logDen)
		best = min(best, chern+tail)
		// A larger cap only raises the Chernoff part and can lower the
		// total by the tail at most: once the tail is the smaller part,
		// at most a factor 2 is left to gain.
		if tail <= chern {
			break
		}
	}
	return min(1, best)
}

// chernoffSquares is the log of min over λ ≥ 0 and μ of
// exp(-λs - μK) Π_g (Σ_x exp(logPMF[g][x] + λx²/n_g + μx))^count[g].
func chernoffSquares(sizes, count []int64, logPMF [][]float64, K int64, s float64) float64 {
	t := s - 1e-9*(1+s)
	// eval returns the exponent at (λ, μ), its derivatives in λ and μ, and
	// its second derivative in μ.
	eval := func(lam, mu float64) (f, dLam, dMu, d2Mu float64) {
		f = -lam*t - mu*float64(K)
		dLam, dMu = -t, -float64(K)
		for g, sz := range sizes {
			c := float64(count[g])
			top := math.Inf(-1)
			for x, lpm := range logPMF[g] {
				top = max(top, lpm+lam*float64(x*x)/float64(sz)+mu*float64(x))
			}
			var z, ev, ek, ekk float64
			for x, lpm := range logPMF[g] {
				xf := float64(x)
				v := xf * xf / float64(sz)
				e := math.Exp(lpm + lam*v + mu*xf - top)
				z += e
				ev += e * v
				ek += e * xf
				ekk += e * xf * xf
			}
			f += c * (top + math.Log(z))
			dLam += c * ev / z
			dMu += c * ek / z
			d2Mu += c * (ekk/z - (ek/z)*(ek/z))
		}
		return f, dLam, dMu, d2Mu
	}
	// profile minimises over μ for a given λ by damped Newton steps (the
	// exponent is convex in μ), starting from the last solution.
	mu := 0.0
	profile := func(lam float64) (f, dLam float64) {
		for range 50 {
			_, _, d, d2 := eval(lam, mu)
			if math.Abs(d) <= 1e-9*float64(K) || d2 <= 0 {
				break
			}
			mu -= max(-2, min(2, d/d2))
		}
		f, dLam, _, _ = eval(lam, mu)
		return f, dLam
	}
	best, d0 := profile(0)
	if d0 >= 0 {
		return best // s is not above its tilted mean: λ = 0 is best
	}
	// The profile is convex in λ: bisect on its derivative. Every (λ, μ)
	// gives a valid bound, so an approximate minimum only loosens it.
	lo, hi := 0.0, 1.0
	for range 40 {
		f, d := profile(hi)
		best = min(best, f)
		if d >= 0 || hi > 1e7 {
			break
		}
		lo, hi = hi, hi*2
	}
	for range 30 {
		mid := (lo + hi) / 2
		f, d := profile(mid)
		best = min(best, f)
		if d < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return best
}

// splitmix is SplitMix64: a small, fast generator whose stream is fixed by
// its seed, so Monte Carlo p-values are reproducible.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a uniform integer in [0, n), n > 0: the high word of a
// 64×64-bit product, rejecting the few low words that would bias it
// (Lemire's method).
func (r *splitmix) below(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		floor := -n % n
		for lo < floor {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}

// gammaQ is the regularized upper incomplete gamma function Q(a, x); the
// chi-square survival function with d degrees of freedom is Q(d/2, x/2).
// A power series below a+1, a continued fraction (modified Lentz) above.
func gammaQ(a, x float64) float64 {
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lg)
	if x < a+1 {
		sum, term, ap := 1/a, 1/a, a
		for range 10000 {
			ap++
			term *= x / ap
			sum += term
			if term < sum*1e-16 {
				break
			}
		}
		return min(1, max(0, 1-sum*front))
	}
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 10000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return min(1, max(0, front*h))
}
