//go:build race

package check

// RaceScale divides the repetitions of the simulation tests under the race
// detector, which makes them ten times slower: the same properties are
// checked on fewer simulated runs, with the binomial margins that fit.
const RaceScale = 8

// Race is set under the race detector, whose sync.Pool drops what it holds
// now and then: tests of how much code allocates measure nothing there.
const Race = true
