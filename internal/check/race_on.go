//go:build race

package check

// RaceScale divides the repetitions of the simulation tests under the race
// detector, which makes them ten times slower: the same properties are
// checked on fewer simulated runs, with the binomial margins that fit.
const RaceScale = 8
