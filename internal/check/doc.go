// Package check holds the few constants and comparisons that tests of
// every layer share, with no dependency: RaceScale, which shrinks the
// simulation tests under the race detector, and Near.
package check
