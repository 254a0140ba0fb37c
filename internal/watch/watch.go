package watch

import (
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pinprobe/pinprobe/internal/detect"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/report"
)

// Options configure a Watch.
type Options struct {
	// GroupBy are the engine's instance headers, in the order of
	// probe.Result.Groups.
	GroupBy []string
	// Retire is how long the series of an address that left DNS (or of an
	// instance value no longer seen) stay before they are deleted.
	Retire time.Duration
	// MaxBackends is how many values of the instance headers a host gets
	// series of: the busiest (see backendSet); the rest count as "other".
	MaxBackends int
	// Detector are the detector's parameters (detect.Default).
	Detector detect.Params
	// Vantage, when set, is a label (vantage) on every series: where the
	// watch runs, so that watches from several places tell theirs apart.
	Vantage string
	// Events receives one line per start or end of a suspect; JSON makes
	// them JSON lines. nil: none.
	Events io.Writer
	JSON   bool
}

// DefaultRetire and DefaultMaxBackends are the watch's defaults.
const (
	DefaultRetire      = 10 * time.Minute
	DefaultMaxBackends = 16
)

// other is the backend label of the values past Options.MaxBackends.
const other = "other"

// Watch is the sink of a watch: its metrics, detector and events.
type Watch struct {
	o   Options
	reg *prometheus.Registry
	m   metrics
	det *detect.Detector

	eps      map[int]*endpoint
	backends map[string]*backendSet       // host -> its instance values
	dnsAddrs map[string]map[string]string // host -> address -> family, as last answered
	suspects map[detect.Scope]bool        // whose gauges are set
	mu       sync.Mutex                   // guards events' writer and hist
	hist     history
}

// endpoint is what the watch keeps of an engine endpoint.
type endpoint struct {
	host, url, addr, family string
	live                    bool
	stopped                 time.Time
	conns                   [connSlots]lastOnConn

	// The endpoint's series, looked up once (at Started) rather than per
	// request: outcomes by status or error class as they come.
	dur, connect, tls, ttfb prometheus.Observer
	failures                prometheus.Counter
	byStatus                map[int]prometheus.Counter
	byClass                 map[probe.ErrorClass]prometheus.Counter
}

// handles looks up e's series in m; Started calls it each time, so an
// endpoint back after its series were retired gets them anew.
func (e *endpoint) handles(m metrics) {
	e.dur = m.duration.WithLabelValues(e.host, e.addr, e.family)
	e.connect = m.phase.WithLabelValues(e.host, e.addr, e.family, "connect")
	e.tls = m.phase.WithLabelValues(e.host, e.addr, e.family, "tls")
	e.ttfb = m.phase.WithLabelValues(e.host, e.addr, e.family, "first_byte")
	e.failures = m.failures.WithLabelValues(e.host, e.url, e.addr, e.family)
	e.byStatus = map[int]prometheus.Counter{}
	e.byClass = map[probe.ErrorClass]prometheus.Counter{}
}

// requests is e's request counter of a status (or, with none, an error
// class).
func (e *endpoint) requests(m metrics, status int, class probe.ErrorClass) prometheus.Counter {
	if status > 0 {
		c := e.byStatus[status]
		if c == nil {
			c = m.requests.WithLabelValues(e.host, e.url, e.addr, e.family, strconv.Itoa(status))
			e.byStatus[status] = c
		}
		return c
	}
	c := e.byClass[class]
	if c == nil {
		c = m.requests.WithLabelValues(e.host, e.url, e.addr, e.family, string(class))
		e.byClass[class] = c
	}
	return c
}

// connSlots is how many of an endpoint's latest connections the watch
// remembers the last outcome of (slot ConnID % connSlots): enough for the
// connections in use at once at a watch's rates, and bounded.
const connSlots = 64

// lastOnConn is the outcome of the latest request on connection id.
type lastOnConn struct {
	id     uint64
	failed bool
}

// New is a Watch with options o; its registry holds its metrics and the
// Go and process collectors.
func New(o Options) *Watch {
	if o.MaxBackends <= 0 {
		o.MaxBackends = DefaultMaxBackends
	}
	w := &Watch{o: o, reg: prometheus.NewRegistry(), det: detect.New(o.Detector),
		eps: map[int]*endpoint{}, backends: map[string]*backendSet{},
		dnsAddrs: map[string]map[string]string{}, suspects: map[detect.Scope]bool{}}
	w.m = newMetrics()
	var r prometheus.Registerer = w.reg
	if o.Vantage != "" {
		r = prometheus.WrapRegistererWith(prometheus.Labels{"vantage": o.Vantage}, w.reg)
	}
	w.m.register(r)
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return w
}

// Handler serves the metrics: text, OpenMetrics or protobuf by
// negotiation.
func (w *Watch) Handler() http.Handler {
	return promhttp.HandlerFor(w.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Registry is the watch's registry (tests gather it).
func (w *Watch) Registry() *prometheus.Registry { return w.reg }

// Started: ep's address is probed from now.
func (w *Watch) Started(ep *probe.Endpoint, at time.Time) {
	e := w.eps[ep.ID]
	if e == nil {
		e = &endpoint{host: strings.ToLower(ep.Target.Host()), url: label(ep.Target.String()), addr: ep.Addr.String(), family: string(ep.Family())}
		w.eps[ep.ID] = e
	}
	e.live, e.stopped = true, time.Time{}
	e.handles(w.m)
	w.m.probed.WithLabelValues(e.host, e.addr, e.family).Set(1)
}

// Stopped: ep's address left DNS; its series go after Options.Retire.
func (w *Watch) Stopped(ep *probe.Endpoint, at time.Time) {
	if e := w.eps[ep.ID]; e != nil && e.live {
		e.live, e.stopped = false, at
		w.m.probed.WithLabelValues(e.host, e.addr, e.family).Set(0)
	}
}

// Answers sets the DNS gauges of every host and counts its changes.
func (w *Watch) Answers(dns []report.DNS, at time.Time) {
	for _, d := range dns {
		host := strings.ToLower(d.Host)
		if len(d.Changes) > 0 {
			w.m.dnsChanges.WithLabelValues(host).Add(float64(len(d.Changes)))
		} else {
			w.m.dnsChanges.WithLabelValues(host) // the series exists from the first answer
		}
		now := map[string]string{}
		count := map[string]int{"ipv4": 0, "ipv6": 0}
		for _, s := range d.Addresses {
			a, err := netip.ParseAddr(s)
			if err != nil {
				continue
			}
			f := string(probe.FamilyOf(a))
			now[a.String()] = f
			count[f]++
			w.m.dnsAnswer.WithLabelValues(host, a.String(), f).Set(1)
		}
		for a, f := range w.dnsAddrs[host] {
			if _, ok := now[a]; !ok {
				w.m.dnsAnswer.DeleteLabelValues(host, a, f)
			}
		}
		w.dnsAddrs[host] = now
		for f, n := range count {
			w.m.dnsAddresses.WithLabelValues(host, f).Set(float64(n))
		}
	}
}

// Results counts each request and feeds the detector.
func (w *Watch) Results(rs []probe.Result) {
	for i := range rs {
		w.result(&rs[i])
	}
}

func (w *Watch) result(r *probe.Result) {
	e := w.eps[r.Endpoint]
	if e == nil {
		return
	}
	if r.Dropped > 0 {
		w.m.dropped.WithLabelValues(e.host, e.addr, e.family).Add(float64(r.Dropped))
		return
	}
	if !r.Request() {
		return
	}
	status := 0
	if r.Status > 0 && r.Err == nil {
		status = r.Status
	}
	id := exemplarID(r.RequestID)
	c := e.requests(w.m, status, r.Class)
	if r.Failed && id != nil {
		c.(prometheus.ExemplarAdder).AddWithExemplar(1, id)
		e.failures.(prometheus.ExemplarAdder).AddWithExemplar(1, id)
		e.dur.(prometheus.ExemplarObserver).ObserveWithExemplar(r.Latency.Seconds(), id)
	} else {
		c.Inc()
		if r.Failed {
			e.failures.Inc()
		}
		e.dur.Observe(r.Latency.Seconds())
	}
	if r.Connect > 0 {
		e.connect.Observe(r.Connect.Seconds())
	}
	if r.TLS > 0 {
		e.tls.Observe(r.TLS.Seconds())
	}
	if r.TTFB > 0 {
		e.ttfb.Observe(r.TTFB.Seconds())
	}
	scopes := []detect.Scope{
		{Host: e.host, Kind: "address", Address: e.addr, Family: e.family},
		{Host: e.host, Kind: "family", Family: e.family},
	}
	result := "success"
	if r.Failed {
		result = "failure"
	}
	for k, v := range r.Groups {
		if v == "" || k >= len(w.o.GroupBy) {
			continue
		}
		hdr := w.o.GroupBy[k]
		b := w.backend(e.host, hdr, v, r.Start)
		w.m.backend.WithLabelValues(e.host, hdr, b, result).Inc()
		if b != other {
			scopes = append(scopes, detect.Scope{Host: e.host, Kind: "instance", Instance: b})
		}
	}
	// A failure of this machine (out of descriptors, ports, buffers) says
	// nothing of the backend: the detector does not see it.
	if r.Class == probe.ClassClient {
		return
	}
	o := detect.Observation{Host: e.host, Scopes: scopes, Failed: r.Failed, At: r.Start.Add(r.Latency), ID: r.RequestID}
	for _, ev := range w.det.Observe(o) {
		w.event(ev)
	}
	if r.ConnID == 0 {
		return
	}
	slot := &e.conns[r.ConnID%connSlots]
	if slot.id == r.ConnID && slot.failed && r.ConnReq > 1 {
		for _, ev := range w.det.ObserveRepeat(o, e.addr, e.family) {
			w.event(ev)
		}
	}
	*slot = lastOnConn{id: r.ConnID, failed: r.Failed}
}

// backend is the label of an instance header's value at host: the value
// itself among the MaxBackends busiest a host shows, "other" past them. A
// value that takes a quieter one's place retires that one's series.
func (w *Watch) backend(host, hdr, v string, at time.Time) string {
	s := w.backends[host]
	if s == nil {
		s = newBackendSet(at)
		w.backends[host] = s
	}
	v = label(v)
	ok, demoted := s.see(hdr+"\x00"+v, at, w.o.MaxBackends)
	if demoted != "" {
		w.forgetBackend(host, demoted, at)
	}
	if !ok {
		return other
	}
	return v
}

// forgetBackend deletes the series of key (header=value) at host and
// what the detector knows of it.
func (w *Watch) forgetBackend(host, key string, at time.Time) {
	hdr, v, _ := strings.Cut(key, "\x00")
	w.m.backend.DeletePartialMatch(prometheus.Labels{"host": host, "header": hdr, "backend": v})
	sc := detect.Scope{Host: host, Kind: "instance", Instance: v}
	w.det.Forget(sc)
	w.m.deleteSuspect(sc)
	w.forget(sc, at)
}

// Tick retires what left long enough ago and ages the detector.
func (w *Watch) Tick(at time.Time) {
	w.det.Decay(at)
	for id, e := range w.eps {
		if e.live || at.Sub(e.stopped) < w.o.Retire || w.liveAt(e.host, e.addr) {
			continue
		}
		delete(w.eps, id)
		w.m.deleteAddress(e.host, e.addr)
		sc := detect.Scope{Host: e.host, Kind: "address", Address: e.addr, Family: e.family}
		w.det.Forget(sc)
		w.forget(sc, at)
		w.forget(detect.Scope{Host: e.host, Kind: "connections", Address: e.addr, Family: e.family}, at)
	}
	for host, s := range w.backends {
		s.halve(at, w.o.Retire)
		for key, last := range s.labelled {
			if at.Sub(last) >= w.o.Retire {
				delete(s.labelled, key)
				w.forgetBackend(host, key, at)
			}
		}
	}
}

// liveAt says whether some endpoint of host still probes addr (another
// URL or port of the host).
func (w *Watch) liveAt(host, addr string) bool {
	for _, e := range w.eps {
		if e.live && e.host == host && e.addr == addr {
			return true
		}
	}
	return false
}

// exemplarID is the exemplar of a request's ID: nil when it has none.
// An exemplar's labels may hold 128 runes; an ID is cut to 64.
func exemplarID(id string) prometheus.Labels {
	if id == "" {
		return nil
	}
	if len(id) > 64 {
		id = id[:64]
	}
	return prometheus.Labels{"request_id": strings.ToValidUTF8(id, "?")}
}

// label is s as a label value: valid UTF-8, at most 128 bytes.
func label(s string) string {
	s = strings.ToValidUTF8(s, "?")
	for len(s) > 128 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}
