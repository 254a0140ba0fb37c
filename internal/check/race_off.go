//go:build !race

package check

// RaceScale divides the repetitions of the simulation tests: 1 without
// the race detector (see race_on.go).
const RaceScale = 1

// RateScale divides the runs of the false positive rate tests: 1 without
// the race detector (see race_on.go).
const RateScale = 1

// Race is set under the race detector, whose sync.Pool drops what it holds
// now and then: tests of how much code allocates measure nothing there.
const Race = false
