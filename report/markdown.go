package report

import (
	"pinprobe/report/phrase"
	"time"
)

// failStatusOf parses the report's --fail-status, 5xx when it has none.
func FailStatusOf(r *Report) FailStatus {
	if f, err := ParseFailStatus(r.Plan.FailStatus); err == nil {
		return f
	}
	f, _ := ParseFailStatus("5xx")
	return f
}

func SecondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// targetsOf lists the endpoints' targets in the order they first appear.
func TargetsOf(r *Report) []string {
	var targets []string
	for _, e := range r.Endpoints {
		targets = append(targets, e.Target)
	}
	return phrase.Dedupe(targets)
}
