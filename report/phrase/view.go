package phrase

import (
	"sort"
	"time"
)

// clock is a time of day in UTC, to the millisecond: "20:43:05.250".
func Clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// sortByCount orders keys of m by count, most first, then by name.
func ByCount(m map[string]int64) []string {
	keys := SortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}
