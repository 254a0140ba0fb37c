package report

// SlowResult says whether a scope's latency is higher than the rest's.
type SlowResult struct {
	Requests     int64   `json:"requests"`
	RestRequests int64   `json:"rest_requests"`
	MedianMS     float64 `json:"median_ms"`
	RestMedianMS float64 `json:"rest_median_ms"`
	P90MS        float64 `json:"p90_ms"`
	RestP90MS    float64 `json:"rest_p90_ms"`
	P99MS        float64 `json:"p99_ms"`
	RestP99MS    float64 `json:"rest_p99_ms"`
	// Ratio is the scope's median over the rest's (0 when the rest's is 0).
	Ratio float64 `json:"ratio"`
	// Share is the fraction of the percentiles 0.5, 1.5, …, 99.5 at which
	// the scope is at least SlowRatio times and SlowMinDiff slower than the
	// rest at the same percentile: 0.25 reads "its slowest quarter of
	// requests took 1.5× as long or more".
	Share float64 `json:"share"`
	// Superiority is the probability that a request of the scope is slower
	// than one of the rest (ties count half): U/(n·m), 0.5 when alike.
	Superiority float64 `json:"superiority"`
	// P is the one-sided Mann-Whitney p-value that the scope is slower.
	P           float64 `json:"p"`
	Method      string  `json:"method"` // "exact", "normal" or "none"
	Significant bool    `json:"significant"`
	Slow        bool    `json:"slow"`   // Significant and Share >= SlowMinShare
	Reason      string  `json:"reason"` // why not Slow; empty when Slow
}
