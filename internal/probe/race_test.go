//go:build race

package probe

// raceEnabled says the race detector is on: code runs several times
// slower, and timing-bound tests scale their bounds (see scaled).
const raceEnabled = true
