//go:build !race

package check

// raceScale divides the repetitions of the simulation tests: 1 without
// the race detector (see race_on_test.go).
const RaceScale = 1
