// Package check holds the few constants and comparisons that tests of
// every layer share, with no dependency: RaceScale and RateScale, which
// shrink the simulation tests under the race detector, Near and
// BinomialUpper, Long (what -short leaves out) and WideParallel (how many
// tests that wait run at once).
package check
