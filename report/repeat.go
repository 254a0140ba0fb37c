package report

// RepeatCounts is one stratum of an endpoint's reused requests (not the
// first request of a connection), split by whether their connection had
// already failed.
type RepeatCounts struct {
	AfterFailure       int64 `json:"after_failure"` // requests on a connection that had failed before
	AfterFailureFailed int64 `json:"after_failure_failed"`
	AfterOK            int64 `json:"after_ok"` // requests on a connection with only successes so far
	AfterOKFailed      int64 `json:"after_ok_failed"`
}
