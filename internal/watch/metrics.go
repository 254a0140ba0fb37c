package watch

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pinprobe/pinprobe/internal/detect"
)

// metrics are a watch's metric families (docs/watch.md lists them).
type metrics struct {
	requests, failures *prometheus.CounterVec
	dropped            *prometheus.CounterVec
	duration, phase    *prometheus.HistogramVec
	probed             *prometheus.GaugeVec
	dnsAnswer          *prometheus.GaugeVec
	dnsAddresses       *prometheus.GaugeVec
	dnsChanges         *prometheus.CounterVec
	backend            *prometheus.CounterVec
	suspect, since     *prometheus.GaugeVec
	outage             *prometheus.GaugeVec
	events             *prometheus.CounterVec
}

// buckets are the classic buckets of the latency histograms, in seconds;
// a scraper that asks for native histograms gets those too.
var buckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// suspectLabels are the labels of a suspect: its host, its kind of scope,
// and the address, family or backend it names ("" for the others).
var suspectLabels = []string{"host", "scope", "address", "family", "backend"}

func histogram(name, help string, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: name, Help: help, Buckets: buckets,
		NativeHistogramBucketFactor:     1.1,
		NativeHistogramMaxBucketNumber:  160,
		NativeHistogramMinResetDuration: time.Hour,
	}, labels)
}

func newMetrics() metrics {
	addr := []string{"host", "address", "family"}
	return metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pinprobe_requests_total",
			Help: "Requests finished, by host, URL (secrets redacted), address, family and outcome (status code, or error class); failed ones carry the request's X-Request-Id as an exemplar."},
			[]string{"host", "url", "address", "family", "outcome"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pinprobe_request_failures_total",
			Help: "Requests that failed (a transport error or a --fail-status status), with the request's X-Request-Id as an exemplar."},
			[]string{"host", "url", "address", "family"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pinprobe_requests_dropped_total",
			Help: "Requests not sent because the endpoint's in-flight limit was reached."}, addr),
		duration: histogram("pinprobe_request_duration_seconds",
			"Request duration from connect (or reuse) to the last body byte, per address; failed requests carry an exemplar.", addr...),
		phase: histogram("pinprobe_request_phase_seconds",
			"Request phases per address: connect and tls on new connections, first_byte from the start.", append(addr, "phase")...),
		probed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pinprobe_endpoint_probed",
			Help: "1 while the address is probed, 0 once it left DNS (its series are deleted after the retire grace)."}, addr),
		dnsAnswer: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pinprobe_dns_answer",
			Help: "1 for each address in the host's latest DNS answer."}, addr),
		dnsAddresses: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pinprobe_dns_addresses",
			Help: "Addresses in the host's latest DNS answer, per family."}, []string{"host", "family"}),
		dnsChanges: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pinprobe_dns_changes_total",
			Help: "Changes of the host's DNS answer seen by re-resolution."}, []string{"host"}),
		backend: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pinprobe_backend_requests_total",
			Help: "Requests by the value of an instance header (a host's busiest values, \"other\" for the rest), and result (success or failure)."},
			[]string{"host", "header", "backend", "result"}),
		suspect: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pinprobe_suspect",
			Help: "1 while the scope is a suspect (it fails more than the rest of its host), 0 once it ended."}, suspectLabels),
		since: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pinprobe_suspect_start_timestamp_seconds",
			Help: "When the current suspect's failures started (the detector's change point), in Unix seconds."}, suspectLabels),
		outage: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pinprobe_outage",
			Help: "1 while every address of the host fails (an outage of everything, not one address standing out)."}, []string{"host"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pinprobe_suspect_events_total",
			Help: "Suspects started and ended, by host, scope and event (start or end)."}, []string{"host", "scope", "event"}),
	}
}

func (m metrics) register(r prometheus.Registerer) {
	r.MustRegister(m.requests, m.failures, m.dropped, m.duration, m.phase, m.probed, m.dnsAnswer, m.dnsAddresses,
		m.dnsChanges, m.backend, m.suspect, m.since, m.outage, m.events)
}

// deleteAddress deletes every series of an address of host.
func (m metrics) deleteAddress(host, addr string) {
	l := prometheus.Labels{"host": host, "address": addr}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		m.requests, m.failures, m.dropped, m.duration, m.phase, m.probed, m.suspect, m.since,
	} {
		v.DeletePartialMatch(l)
	}
}

// deleteSuspect deletes a suspect's series.
func (m metrics) deleteSuspect(sc detect.Scope) {
	m.suspect.DeleteLabelValues(suspectValues(sc)...)
	m.since.DeleteLabelValues(suspectValues(sc)...)
}

func suspectValues(sc detect.Scope) []string {
	return []string{sc.Host, sc.Kind, sc.Address, sc.Family, sc.Instance}
}
