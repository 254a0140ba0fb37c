package judge

// LookAlpha returns the significance level of one look at a run judged
// repeatedly (--until-verdict: judged every second, stopped at the first
// settled verdict), so that the chance of any false alarm over all the
// looks stays at most alpha.
//
// Half of alpha is spread evenly over the interim looks, alpha/(2(K-1))
// each for at most K looks, and the other half goes to the last look, made
// when the run ends without having stopped (its duration is over, or it was
// interrupted): by Bonferroni's inequality the looks together spend at most
// alpha, whatever their number up to K and however the looks depend on each
// other. So an interim look stops the run only on overwhelming evidence,
// and a run that goes the distance is judged almost as sharply as one
// judged once (alpha/2 instead of alpha).
//
// Why not an alpha-spending boundary (O'Brien-Fleming, Pocock): those
// derive sharper per-look levels from the joint normal law of a statistic
// with independent increments. pinprobe's p-values are exact, discrete and
// partly Monte Carlo, several tests are made at each look, and the looks
// are every second, not at planned fractions of the information; the
// union bound needs none of that. Its price is bounded: with alpha = 0.001
// and K = 300 looks an interim look needs z = 4.65 (p < 1.7e-6), where
// one look at alpha needs z = 3.09; since evidence grows with the square
// root of the requests, a real effect crosses it after about (4.65/3.09)²
// = 2.3 times the requests a single look would need, and the last look
// needs z = 3.29.
//
// The Bonferroni split over the tests of one look comes on top:
// LookAlpha(alpha, K, last)/m for m tests. maxLooks below 2 is a
// single look: alpha. Only a look whose verdict can stop the run counts;
// a look that merely updates the progress display spends nothing.
func LookAlpha(alpha float64, maxLooks int, last bool) float64 {
	if maxLooks < 2 {
		return alpha
	}
	if last {
		return alpha / 2
	}
	return alpha / (2 * float64(maxLooks-1))
}
