package report

// LatencyBomb is a latency histogram of one value in each of its 23,552
// buckets: 23,552 bytes of payload in about a hundred of base64, the most a
// histogram inflates.
func LatencyBomb() (enc string, values int64) {
	counts := make([]int64, latencyGeometry.countsLen)
	for i := range counts {
		counts[i] = 1
	}
	return encodeCounts(counts, latencyGeometry), int64(len(counts))
}
