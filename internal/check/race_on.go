//go:build race

package check

// RaceScale divides the repetitions of the simulation tests under the race
// detector, which makes them ten times slower: the same properties are
// checked on fewer simulated runs, with the binomial margins that fit.
const RaceScale = 8

// RateScale divides, under the race detector, the runs of the tests that
// measure how often a statistical test errs on healthy data (a false
// positive rate): each compares its count with the binomial margin of its
// own number of runs, so the claim holds at any count, with a wider
// margin. CI runs them at this scale; go test without -race, at full.
const RateScale = 16

// Race is set under the race detector, whose sync.Pool drops what it holds
// now and then: tests of how much code allocates measure nothing there.
const Race = true
