package judge

// LookAlpha returns the level of one look at a run judged repeatedly
// (--until-verdict) so that any false alarm over all looks has chance at most
// alpha: alpha/(2(K-1)) for each interim look of at most K, alpha/2 for the last
// (the run ended without stopping); by Bonferroni, however the looks depend on
// each other. Alpha-spending boundaries (O'Brien-Fleming) need a normal
// statistic with independent increments at planned looks, which exact, discrete
// p-values every second are not. maxLooks below 2 is one look: alpha. Only a
// look whose verdict can stop the run counts; its m tests get LookAlpha/m each.
func LookAlpha(alpha float64, maxLooks int, last bool) float64 {
	if maxLooks < 2 {
		return alpha
	}
	if last {
		return alpha / 2
	}
	return alpha / (2 * float64(maxLooks-1))
}
