package words

// Nearest is the name of names closest to word when it is a likely typo of
// it: at most two edits, and fewer than half the name's letters; "" when
// none is. Edits are letters inserted, deleted or replaced and two
// neighbours swapped ("hlep" is one edit from "help"). Words or names over
// 64 bytes are never near: they come from outside, and the distance costs
// the product of the lengths.
func Nearest(word string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(word, n); d < bestD && d*2 < len(n) {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance from a to b, or 99
// when either is over 64 bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	// Three rows: the one before the previous serves the swaps.
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
