package probe

import (
	"math"
	"time"
)

// MaxConcurrency is the most workers per endpoint AutoConcurrency suggests,
// as many as the command line accepts.
const MaxConcurrency = 10000

// descriptorReserve is how many file descriptors AutoConcurrency leaves for
// everything but the endpoints' connections: the runtime's own, standard
// streams, DNS lookups, the report file.
const descriptorReserve = 64

// AutoConcurrency returns a Concurrency for endpoints endpoints that each get
// perEndpointRate requests/s: enough workers that every planned request is
// sent even if each takes the whole timeout (ceil(rate × timeout) + 1),
// but no more than the descriptor budget allows (fdSoft less a reserve of
// 64, shared by the endpoints, one descriptor per worker's connection),
// nor MaxConcurrency, nor less than 1. A rate or timeout of 0 (the closed
// model has no rate) asks for MaxConcurrency within the budget; fdSoft 0
// means no known limit.
func AutoConcurrency(perEndpointRate float64, timeout time.Duration, endpoints int, fdSoft uint64) int {
	need := MaxConcurrency
	if perEndpointRate > 0 && timeout > 0 {
		n := math.Ceil(perEndpointRate*timeout.Seconds()) + 1
		if n < MaxConcurrency {
			need = int(n)
		}
	}
	if fdSoft > 0 {
		budget := uint64(0)
		if fdSoft > descriptorReserve {
			budget = (fdSoft - descriptorReserve) / uint64(max(endpoints, 1))
		}
		if budget < uint64(need) {
			need = int(budget)
		}
	}
	return max(need, 1)
}
