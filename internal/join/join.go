package join

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pinprobe/pinprobe/internal/accesslog"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/words"
)

// Bounds of a join.
const (
	// MaxHeld bounds the lines a join holds to place them: four per
	// request of the run and 100,000 more, at most 4,000,000 (72 bytes
	// each: under 300 MB at the most).
	MaxHeld = 4_000_000
	// maxNames bounds the distinct backends, instances and listeners a
	// join tells apart, maxClients the clients (the run's are among
	// many); past it they count as "(others)". A line of an "(others)"
	// client is placed by its request ID only: nothing says whose it is.
	maxNames   = 1024
	maxClients = 1 << 16
	// maxName is the longest name kept of a log's.
	maxName = 200
	// maxZone is the largest time zone offset: a log that writes local
	// times without their zone (HAProxy's %tr) may be off by it.
	maxZone = 14 * time.Hour
	// maxListed bounds the IDs and line references listed.
	maxListed = 10
	// preflightWindow is how long before the run its preflight may
	// connect: a check per endpoint, each within its timeout.
	preflightWindow = 30 * time.Second
)

// Options say how to join.
type Options struct {
	// MaxOffset is the largest clock offset between pinprobe and the
	// gateway considered; 0 means two minutes.
	MaxOffset time.Duration
	// Clients are the addresses the gateway sees pinprobe as (behind a
	// NAT); none: learned from the lines matched, else the run's own
	// local addresses.
	Clients []netip.Addr
}

// how a held line was placed.
const (
	placedNo = iota
	placedID
	placedPort
	placedWindow
)

// held is a line of the run's clients, in its window, held to be placed:
// its strings interned.
type held struct {
	t        int64 // unix nanoseconds, as logged (start where known)
	line     int64
	lat      int64 // the duration logged, ns; -1 when not
	client   uint32
	backend  uint32
	bstatus  uint32
	instance uint32
	listener uint32
	reason   uint32
	server   uint32 // index into Joiner.serverList; 0 none
	res      int32  // resolution, ms
	endpoint int32  // index into the report's endpoints; -1 unknown
	trail    int32  // the trail request matched, index into Joiner.trail; -1 none
	file     uint16
	port     uint16
	status   int16
	atEnd    bool
	how      uint8
	// foreign says the line's path or host is none of the run's
	// endpoints'; noRequest that it carries no request at all (a
	// connection closed before one: HAProxy's <BADREQ>).
	foreign   bool
	noRequest bool
}

// trailRef is one request of an endpoint's trail.
type trailRef struct {
	endpoint int
	report.TrailRequest
	matched bool
}

// names interns strings, at most maxNames, and then one more: othersName,
// which stands for every later one; index 0 is "".
type names struct {
	idx  map[string]uint32
	list []string
	max  int
}

func newNames() *names { return newNamesOf(maxNames) }

func newNamesOf(max int) *names {
	return &names{idx: map[string]uint32{"": 0}, list: []string{""}, max: max}
}

const othersName = "(others)"

func (n *names) id(s string) uint32 {
	if i, ok := n.idx[s]; ok {
		return i
	}
	if len(n.list) >= n.max {
		if i, ok := n.idx[othersName]; ok {
			return i
		}
		s = othersName // the one name past the bound
	}
	s = clean(s)
	if i, ok := n.idx[s]; ok {
		return i
	}
	n.idx[s] = uint32(len(n.list))
	n.list = append(n.list, s)
	return uint32(len(n.list) - 1)
}

func clean(s string) string { return words.LimitBytes(words.SafeText(s, false), maxName) }

// Joiner joins one report with the logs Add is given.
type Joiner struct {
	rep   *report.Report
	opt   Options
	fail  report.FailStatus
	start time.Time
	end   time.Time

	trail   []trailRef
	byID    map[string]int32 // request ID → trail index
	epOf    map[string]int   // "run-ep" of a request ID → endpoint index
	runIDs  []string         // the run IDs of the run (several when merged)
	partial bool             // the report counts only some of its run's requests (IDRanges)
	ports   map[uint16]int   // client port → endpoint, -1 when several
	servers map[netip.AddrPort]int
	// serverList and serverIdx intern the addresses lines came to.
	serverList []netip.AddrPort
	serverIdx  map[netip.AddrPort]uint32
	// portsComplete says the report lists every connection of the run
	// (no endpoint had more than report.MaxConnRecords): a line from a
	// client port not among them is another client's.
	portsComplete bool
	// given are the clients of Options.Clients, interned.
	given map[uint32]bool
	// byFamily is the run's one endpoint of each family; -1 when several.
	byFamily map[string]int
	// paths and hosts are the request paths and Host names of the run's
	// endpoints: a line of another path or host is no request of the run.
	paths, hosts map[string]bool
	// seenID are the request IDs read; seen and seenFile count the
	// lines of each fingerprint in the files before this one and in
	// this one, to tell a line logged twice (the same log given twice,
	// rotated files that overlap).
	seenID         map[string]struct{}
	seen, seenFile map[uint64]uint32

	held    []held
	maxHeld int
	files   []string
	logs    []Log
	lines   Lines
	// namesBackend says, per file, that its log names backends: its
	// format logs them, or a line of it named one. A line of a log that
	// names none is in no backend's count: it was not routed nowhere,
	// its log does not say.
	namesBackend []bool

	backends, instances, listeners, reasons, statuses, clients *names
	// failReasons counts the reasons the log gives for the run's failed
	// lines, by the status the gateway sent: the headline's words.
	failReasons            map[string]map[uint32]int64
	backendFam             map[uint32]string // a backend's family, where the log gives its address
	logged                 accesslog.Field
	resMax                 time.Duration
	noZone                 bool
	idsLogged, portsLogged bool
	allLogIDs              bool // every log logs request IDs
	// kind is the kind of the log being read; reasonWords says its
	// reason codes in words; sampled that a log may be a sample.
	kind        accesslog.Kind
	reasonWords map[string]string
	sampled     bool
}

// New starts a join of rep, a saved report checked on read.
func New(rep *report.Report, o Options) *Joiner {
	if o.MaxOffset <= 0 {
		o.MaxOffset = 2 * time.Minute
	}
	j := &Joiner{rep: rep, opt: o, fail: report.FailStatusOf(rep), start: rep.StartedAt.Time, end: rep.EndedAt.Time,
		byID: map[string]int32{}, backendFam: map[uint32]string{}, epOf: map[string]int{}, ports: map[uint16]int{}, serverList: []netip.AddrPort{{}}, serverIdx: map[netip.AddrPort]uint32{}, byFamily: map[string]int{}, servers: map[netip.AddrPort]int{},
		backends: newNames(), instances: newNames(), listeners: newNames(), reasons: newNames(), statuses: newNames(), clients: newNamesOf(maxClients),
		paths: map[string]bool{}, hosts: map[string]bool{}, seenID: map[string]struct{}{}, seen: map[uint64]uint32{}}
	runs := map[string]bool{}
	j.portsComplete = len(rep.Endpoints) > 0
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		j.partial = j.partial || rep.Part || len(e.IDRanges) > 0
		if e.Conns == nil || e.Conns.Overflow.Connections > 0 {
			j.portsComplete = false
		}
		if a, err := netip.ParseAddr(e.Address); err == nil {
			ap := netip.AddrPortFrom(a.Unmap(), e.Port)
			if _, dup := j.servers[ap]; dup {
				j.servers[ap] = -1
			} else {
				j.servers[ap] = i
			}
		}
		if u, err := url.Parse(e.Target); err == nil {
			j.paths[cmp.Or(u.EscapedPath(), "/")] = true
			j.hosts[strings.ToLower(u.Hostname())] = true
		}
		if e.Host != "" {
			j.hosts[strings.ToLower(e.Host)] = true
		}
		if _, dup := j.byFamily[e.Family]; dup {
			j.byFamily[e.Family] = -1
		} else {
			j.byFamily[e.Family] = i
		}
		if e.Conns != nil {
			for _, c := range e.Conns.Records {
				j.addPort(c.LocalPort, i)
			}
		}
		if e.Trail == nil {
			continue
		}
		for _, r := range e.Trail.Requests {
			j.addPort(r.Port, i)
			if r.RequestID != "" {
				if _, dup := j.byID[r.RequestID]; !dup {
					j.byID[r.RequestID] = int32(len(j.trail))
				}
				if run, ep, _, ok := splitID(r.RequestID); ok {
					j.epOf[run+"-"+ep] = i
					runs[run] = true
				}
			}
			j.trail = append(j.trail, trailRef{endpoint: i, TrailRequest: r})
		}
	}
	if rep.RunID != "" {
		runs[rep.RunID] = true
	}
	for _, in := range rep.Inputs { // a merged report: each run merged
		if in.RunID != "" {
			runs[in.RunID] = true
		}
	}
	for r := range runs {
		j.runIDs = append(j.runIDs, r)
	}
	sort.Strings(j.runIDs)
	j.maxHeld = int(min(int64(MaxHeld), 4*rep.Totals.Requests+100_000))
	return j
}

// hostOnly is a Host header's name without its port.
func hostOnly(h string) string {
	if hh, _, err := net.SplitHostPort(h); err == nil {
		return hh
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// foreign reports whether a record's path or host (where logged) is none
// of the run's endpoints'.
func (j *Joiner) foreign(rec *accesslog.Record) bool {
	if rec.URI != "" && strings.HasPrefix(rec.URI, "/") && len(j.paths) > 0 {
		p, _, _ := strings.Cut(rec.URI, "?")
		if !j.paths[p] {
			if u, err := url.Parse(p); err != nil || !j.paths[cmp.Or(u.EscapedPath(), "/")] {
				return true
			}
		}
	}
	if h := strings.ToLower(hostOnly(rec.Host)); h != "" && h != "-" && len(j.hosts) > 0 && !j.hosts[h] {
		return true
	}
	return false
}

// duplicate reports whether rec was logged before: its request ID read
// already, or, without one, a line like it in an earlier file (as many
// times there as in this one so far). Lines alike in one file are
// different requests: a log to the second holds many.
func (j *Joiner) duplicate(rec *accesslog.Record) bool {
	if rec.RequestID != "" {
		if _, ok := j.seenID[rec.RequestID]; ok {
			return true
		}
		if len(j.seenID) < j.maxHeld {
			j.seenID[rec.RequestID] = struct{}{}
		}
		return false
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s|%d|%s|%d|%d|%s|%s|%s|%s|%s|%s|%s|%d", rec.Time.UnixNano(), rec.Client, rec.ClientPort, rec.Server, rec.Status, rec.Duration,
		rec.Method, rec.URI, rec.Host, rec.Listener, rec.Instance, rec.Backend(), rec.Reason, len(rec.Tries))
	k := h.Sum64()
	if len(j.seenFile) >= j.maxHeld {
		return false
	}
	j.seenFile[k]++
	return j.seenFile[k] <= j.seen[k]
}

// serverID interns the address and port a line came to; 0 for none (or
// past maxNames of them).
func (j *Joiner) serverID(ap netip.AddrPort) uint32 {
	if !ap.IsValid() {
		return 0
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if i, ok := j.serverIdx[ap]; ok {
		return i
	}
	if len(j.serverList) >= maxNames {
		return 0
	}
	j.serverIdx[ap] = uint32(len(j.serverList))
	j.serverList = append(j.serverList, ap)
	return uint32(len(j.serverList) - 1)
}

func (j *Joiner) knownPort(p uint16) bool { _, ok := j.ports[p]; return ok }

func (j *Joiner) addPort(p uint16, ep int) {
	if p == 0 {
		return
	}
	if old, ok := j.ports[p]; ok && old != ep {
		j.ports[p] = -1
		return
	}
	j.ports[p] = ep
}

// splitID parts a pinprobe request ID, "pinprobe-RUN-EP-SEQ", into its
// run and endpoint.
func splitID(id string) (run, ep string, seq int64, ok bool) {
	rest, ok := strings.CutPrefix(id, "pinprobe-")
	if !ok {
		return "", "", 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", 0, false
	}
	seq, _ = strconv.ParseInt(parts[2], 10, 64)
	return parts[0], parts[1], seq, true
}

// ofReport says whether a request ID of the run, of endpoint ep (as the
// ID says it) and sequence number seq, is one the report counts: every
// one, unless the report counts only some (report.Endpoint.IDRanges, a
// watch's window).
func (j *Joiner) ofReport(run, ep string, seq int64) bool {
	if !j.partial {
		return true
	}
	e, ok := j.epOf[run+"-"+ep]
	if !ok {
		return false // an endpoint with no request in the report
	}
	rs := j.rep.Endpoints[e].IDRanges
	i, found := slices.BinarySearchFunc(rs, seq, func(r report.IDRange, n int64) int { return cmp.Compare(r.Last, n) })
	return found || i < len(rs) && rs[i].First <= seq
}

// Add reads one log to its end, name naming it in the document. It
// returns the reader's error (a read error); a log cut short (a truncated
// gzip stream) is said in its Log and read as far as it goes.
func (j *Joiner) Add(name string, r *accesslog.Reader) error {
	file := uint16(len(j.files))
	j.files = append(j.files, clean(name))
	j.seenFile = map[uint64]uint32{}
	defer func() {
		for k, n := range j.seenFile {
			if _, ok := j.seen[k]; ok || len(j.seen) < j.maxHeld {
				j.seen[k] = max(j.seen[k], n)
			}
		}
		j.seenFile = nil
	}()
	wide := j.opt.MaxOffset + 2*time.Minute
	from, to := j.start.Add(-wide).UnixNano(), j.end.Add(wide).UnixNano()
	var rec accesslog.Record
	var err error
	sawID := false
	j.kind = r.Kind()
	named := false
	for {
		if err = r.Next(&rec); err != nil {
			break
		}
		named = named || len(rec.Tries) > 0
		sawID = j.hold(&rec, file, from, to) || sawID
	}
	j.namesBackend = append(j.namesBackend, named || r.Logged().Has(accesslog.FieldBackend))
	// What a JSON log logs is known once its records are read.
	if r.Logged().Has(accesslog.FieldClientPort) {
		j.portsLogged = true
	}
	j.logged |= r.Logged()
	// A log logs request IDs when its lines carry them (HAProxy's %hr
	// does only where the configuration captures one).
	if sawID {
		j.idsLogged = true
	}
	j.allLogIDs = sawID && (len(j.files) == 1 || j.allLogIDs)
	j.sampled = j.sampled || r.Partial() != ""
	j.logs = append(j.logs, j.logOf(r, file))
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// hold reads one record of file: placed by its request ID, or held to be
// placed by its time when that falls in the run (from, to in Unix
// nanoseconds) and it is no copy of a line held before; a line of another
// pinprobe run is counted and dropped. It reports whether the record
// carried a request ID of pinprobe's.
func (j *Joiner) hold(rec *accesslog.Record, file uint16, from, to int64) (sawID bool) {
	j.lines.Records++
	if rec.Resolution > j.resMax {
		j.resMax = rec.Resolution
	}
	j.noZone = j.noZone || rec.NoZone
	h := held{endpoint: -1, trail: -1, file: file, line: rec.Line, lat: int64(rec.Duration), res: int32(rec.Resolution / time.Millisecond), atEnd: rec.AtEnd}
	if rid := rec.RequestID; rid != "" {
		ti, inTrail := j.byID[rid]
		run, ep, seq, isPinprobe := splitID(rid)
		// Only pinprobe's IDs say the log keeps the request's own: an
		// edge Envoy replaces X-Request-Id with an ID of its own, and its
		// lines are placed by address and time.
		sawID = inTrail || isPinprobe
		switch {
		case inTrail:
			h.how, h.trail, h.endpoint = placedID, ti, int32(j.trail[ti].endpoint)
		case isPinprobe && slices.Contains(j.runIDs, run) && !j.ofReport(run, ep, seq):
			// The run's, outside the part of it the report counts.
			j.lines.Outside++
			return sawID
		case isPinprobe && slices.Contains(j.runIDs, run):
			h.how = placedID
			if e, ok := j.epOf[run+"-"+ep]; ok {
				h.endpoint = int32(e)
			}
		case isPinprobe:
			j.lines.OtherRuns++
			return sawID
		}
	}
	t := rec.Time.UnixNano()
	lo, hi := from, to
	if rec.NoZone {
		// A local time without its zone: up to 14 hours either way.
		lo, hi = lo-int64(maxZone), hi+int64(maxZone)
	}
	if h.how == placedNo && (rec.Time.IsZero() || t < lo || t > hi) {
		j.lines.Outside++
		return sawID
	}
	// A copy of a line read before (of the lines that could be the
	// run's: only those are remembered) is the same request.
	if j.duplicate(rec) {
		j.lines.Duplicates++
		if len(j.lines.DuplicatesAt) < maxListed {
			j.lines.DuplicatesAt = append(j.lines.DuplicatesAt, j.files[file]+":"+strconv.FormatInt(rec.Line, 10))
		}
		return sawID
	}
	// A line the run's request ID placed is held past the bound, up to
	// as many again: other clients' lines must not crowd the run's out.
	if n := len(j.held); n >= j.maxHeld && (h.how != placedID || n >= 2*j.maxHeld) {
		j.lines.NotHeld++
		return sawID
	}
	// A time to the second (nginx's $time_local) is truncated: the
	// request was logged within the second after it.
	h.t = t + int64(rec.Resolution)/2
	h.client = j.clients.id(rec.Client.String())
	h.port = rec.ClientPort
	h.status = int16(rec.Status)
	h.backend = j.backends.id(rec.Backend())
	if n := len(rec.Tries); n > 0 && rec.Tries[n-1].Addr.IsValid() {
		if _, ok := j.backendFam[h.backend]; !ok {
			j.backendFam[h.backend] = familyOf(rec.Tries[n-1].Addr.String())
		}
	}
	h.bstatus = j.statuses.id(rec.BackendStatus())
	h.instance = j.instances.id(rec.Instance)
	h.listener = j.listeners.id(rec.Listener)
	h.reason = j.reasons.id(rec.Reason)
	if code := j.reasons.list[h.reason]; code != "" && code != othersName {
		if _, ok := j.reasonWords[code]; !ok {
			if w := accesslog.ReasonWords(j.kind, rec.Reason); w != "" {
				if j.reasonWords == nil {
					j.reasonWords = map[string]string{}
				}
				j.reasonWords[code] = w
			}
		}
	}
	h.server = j.serverID(rec.Server)
	h.noRequest = rec.Method == "" && rec.URI == "" && (rec.Status == 0 || rec.Status == 400) && h.how == placedNo
	h.foreign = h.how == placedNo && !h.noRequest && j.foreign(rec)
	j.held = append(j.held, h)
	return sawID
}

// logOf is the document's row of the log of file that r has read.
func (j *Joiner) logOf(r *accesslog.Reader, file uint16) Log {
	st := r.Stats()
	l := Log{Name: j.files[file], Kind: string(r.Kind()), Format: r.Format(), Gzip: r.Gzip(), Logs: r.Logged().Names(),
		Lines: st.Lines, Records: st.Records, Skipped: st.Skipped, SkippedAt: st.SkippedAt, TooLong: st.TooLong, Other: st.Other}
	if l.Logs == nil {
		l.Logs = []string{}
	}
	if l.SkippedAt == nil {
		l.SkippedAt = []int64{}
	}
	if u := st.Unmatched; u != nil {
		l.Unmatched = &Unmatched{Line: u.Line, Column: u.Column, FormatHas: clean(u.FormatHas), LineHas: clean(u.LineHas), ReadsAs: u.ReadsAs}
	}
	if st.Err != nil {
		l.Error = clean(st.Err.Error())
	}
	l.Partial = clean(r.Partial())
	if lg := r.Logged(); st.Records > 0 && !lg.Has(accesslog.FieldRequestID) && !lg.Has(accesslog.FieldClientPort) {
		l.CannotTell = append(l.CannotTell, "which single request a line is (it logs neither a request ID nor the client's port): its lines are placed by client address and time")
	}
	for _, c := range r.Cannot() {
		l.CannotTell = append(l.CannotTell, clean(c))
	}
	return l
}

// placeByPorts places the lines by client port, where the log has them
// (see matchPorts), and counts the pairs that set the offset by them.
func (j *Joiner) placeByPorts(out *Join, off, tol int64) {
	if j.allLogIDs && j.placedByID() {
		// Every log logs request IDs and the run's lines carry theirs: a
		// line without one is another client's, whatever its port (a
		// port repeats across many clients).
		return
	}
	if j.matchPorts(off, tol, nil) {
		// Port numbers repeat across clients: keep the clients most
		// matches came from, and match again among their lines only.
		if allow := j.portClients(); allow != nil {
			j.matchPorts(off, tol, allow)
		}
	}
	if out.Offset.By == "client port" {
		out.Offset.Pairs = 0
		for i := range j.held {
			if j.held[i].how == placedPort {
				out.Offset.Pairs++
			}
		}
	}
}

// placedByID reports whether a line was placed by the run's request ID.
func (j *Joiner) placedByID() bool {
	for i := range j.held {
		if j.held[i].how == placedID {
			return true
		}
	}
	return false
}

// placeByWindow places the lines no ID or port placed by their time, in
// the run's window (off and tol from the run's clock), and sorts out the
// others: the preflight's connections, lines to no endpoint of the run,
// other clients' lines, lines outside the run. Each placed line gets its
// endpoint.
func (j *Joiner) placeByWindow(clients map[uint32]bool, off, tol int64) {
	lo, hi := j.start.UnixNano()+off-tol, j.end.UnixNano()+off+tol
	// When every log logs request IDs and the run sent them, a line
	// without one of them is another client's.
	idsOnly := j.allLogIDs && len(j.byID) > 0
	// A line from a client port the run never had is another client's,
	// when the report lists every port of the run and the gateway logs
	// the ports pinprobe used (behind a NAT it logs others).
	portsKept := false
	for i := range j.held {
		h := &j.held[i]
		if h.how == placedPort || h.trail >= 0 && h.port != 0 && h.port == j.trail[h.trail].Port {
			portsKept = true
			break
		}
	}
	foreignPort := func(h *held) bool { return j.portsComplete && portsKept && h.port != 0 && !j.knownPort(h.port) }
	// pinprobe's preflight opens a connection to each endpoint and closes
	// it before the run starts: a gateway that logs connections without
	// a request (HAProxy's <BADREQ>) logs it.
	preLo, preHi := j.start.UnixNano()+off-tol-int64(preflightWindow), j.start.UnixNano()+off+tol
	// When the log names the address and port lines came to and some are
	// the run's endpoints', a line to another is another listener's.
	serversKnown := false
	for i := range j.held {
		if h := &j.held[i]; h.server != 0 && (h.how != placedNo || clients[h.client]) {
			if e, ok := j.servers[j.serverList[h.server]]; ok && e >= 0 {
				serversKnown = true
				break
			}
		}
	}
	otherListener := func(h *held) bool {
		if !serversKnown || h.server == 0 {
			return false
		}
		_, ok := j.servers[j.serverList[h.server]]
		return !ok
	}
	for i := range j.held {
		h := &j.held[i]
		if h.how == placedNo {
			if h.noRequest && clients[h.client] && h.t >= preLo && h.t <= preHi {
				j.lines.Preflight++
				continue
			}
			if clients[h.client] && (h.foreign || otherListener(h)) && !idsOnly {
				j.lines.NoKnownEndpoint++
				if len(j.lines.NoKnownEndpointAt) < maxListed {
					j.lines.NoKnownEndpointAt = append(j.lines.NoKnownEndpointAt, j.files[h.file]+":"+strconv.FormatInt(h.line, 10))
				}
				continue
			}
			if idsOnly || !clients[h.client] || foreignPort(h) {
				j.lines.OtherClients++
				continue
			}
			if h.t < lo || h.t > hi {
				j.lines.Outside++
				continue
			}
			h.how = placedWindow
		}
		if h.endpoint < 0 {
			h.endpoint = int32(j.endpointOf(h))
		}
	}
}

// expected is when a held line's time should be by pinprobe's clock for
// trail request r: its start, or its end when the log stamps the end.
func (h *held) expected(r *report.TrailRequest) int64 {
	t := r.At.UnixNano()
	if h.atEnd {
		t += int64(r.LatencyMS * 1e6)
	}
	return t
}

// Finish places the lines read and judges them.
func (j *Joiner) Finish() *Join {
	out := &Join{Schema: Schema, Version: Revision, Logs: j.logs, Alpha: alpha,
		Run: Run{RunID: j.rep.RunID, StartedAt: j.rep.StartedAt, EndedAt: j.rep.EndedAt, Requests: j.rep.Totals.Requests, Failed: j.rep.Totals.Failed}}
	if out.Logs == nil {
		out.Logs = []Log{}
	}
	j.given = map[uint32]bool{}
	for _, a := range j.opt.Clients {
		if i, ok := j.clients.idx[a.Unmap().String()]; ok {
			j.given[i] = true
		}
	}
	off := j.offset(out)
	tol := j.tolerance(out)
	j.placeByPorts(out, off, tol)
	clients := j.runClients()
	j.placeByWindow(clients, off, tol)
	j.learnListeners()
	for c := range clients {
		out.Clients = append(out.Clients, j.clients.list[c])
	}
	sort.Strings(out.Clients)
	if out.Clients == nil {
		out.Clients = []string{}
	}
	j.tally(out, off)
	out.ReasonWords = j.reasonWords
	j.judge(out)
	return out
}

// offset estimates the gateway's clock less pinprobe's from the lines
// matched by request ID, else by client port; 0 when neither is logged.
func (j *Joiner) offset(out *Join) int64 {
	o := &out.Offset
	o.ResolutionMS = float64(j.resMax) / 1e6
	o.NoZone = j.noZone
	var ds []int64
	for i := range j.held {
		h := &j.held[i]
		if h.trail >= 0 {
			ds = append(ds, h.t-h.expected(&j.trail[h.trail].TrailRequest))
		}
	}
	by := "request ID"
	if len(ds) == 0 && j.portsLogged {
		by = "client port"
		ds = j.portDeltas()
	}
	if len(ds) == 0 {
		switch {
		case j.lines.Records == 0:
			o.Why = "no line of the logs parsed as a request"
			return 0
		case !j.idsLogged && !j.portsLogged:
			o.Why = "the log has neither request IDs nor client ports"
		default:
			o.Why = "no line matched a single request of the run"
		}
		return j.timeOffset(o)
	}
	slices.Sort(ds)
	// The densest stretch of the deltas, as wide as the resolution and
	// 50 ms: port numbers repeat, the true offset is where most agree.
	width := max(int64(j.resMax)+int64(j.resMax)/10, int64(50*time.Millisecond))
	best, bestN := 0, 0
	for i, k := 0, 0; i < len(ds); i++ {
		for ds[i]-ds[k] > width {
			k++
		}
		if n := i - k + 1; n > bestN {
			best, bestN = k, n
		}
	}
	if by == "client port" && (bestN*5 < len(ds) || bestN < 3) {
		// Too few of the pairs agree on one offset for the ports to be
		// the run's (behind a NAT the gateway logs others, and a port
		// pairs with lines at random times): no pair is trusted.
		o.Why = "too few lines matched single requests of the run by client port (behind a NAT the gateway logs other ports)"
		j.portsLogged = false
		return j.timeOffset(o)
	}
	in := ds[best : best+bestN]
	med := in[len(in)/2]
	spread := in[len(in)*3/4] - in[len(in)/4]
	o.Measured, o.Pairs, o.By = true, int64(len(in)), by
	o.MS = float64(med) / 1e6
	o.SpreadMS = max(float64(spread), float64(j.resMax)) / 1e6
	return med
}

// timeOffset measures the offset from the times of the client's lines
// (timelineOffset) into o, within --max-offset: an offset past it is no
// clock's, but a log of another time, whose lines are not the run's. When
// it cannot, the clocks are taken to agree: 0.
func (j *Joiner) timeOffset(o *Offset) int64 {
	const agree = ": lines were placed by client address and time, taking the clocks to agree"
	d, n, ok := j.timelineOffset()
	if !ok {
		o.Why += agree
		return 0
	}
	limit := int64(j.opt.MaxOffset)
	if j.noZone {
		limit += int64(maxZone)
	}
	if d > limit || d < -limit {
		o.Why += fmt.Sprintf(": the lines of the run's clients lie %+.0f s from the run's requests, past --max-offset %s (a log of another time, or of another client at the same address)",
			float64(d)/1e9, j.opt.MaxOffset)
		o.Why += agree
		return 0
	}
	o.Measured, o.By, o.Pairs = true, "time", n
	o.MS = float64(d) / 1e6
	o.SpreadMS = max(j.rep.Timeline.IntervalS*1000, float64(j.resMax)/1e6)
	o.Why += ": measured from when the client's lines were logged against when the run sent (the medians of both), so only to within the run's timeline interval"
	return d
}

// timelineOffset estimates the offset where no line matches a single
// request: the median time of the lines of the run's clients (given, or
// its own addresses) less the median time the run sent a request (its
// timeline). ok is false without a timeline or such lines.
func (j *Joiner) timelineOffset() (d, n int64, ok bool) {
	tl := j.rep.Timeline
	if tl.IntervalS <= 0 || len(tl.Series) == 0 {
		return 0, 0, false
	}
	clients := j.runClients()
	var ts []int64
	for i := range j.held {
		if h := &j.held[i]; h.how == placedNo && clients[h.client] && !h.foreign && !h.noRequest {
			t := h.t
			if h.atEnd && h.lat > 0 {
				t -= h.lat
			}
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return 0, 0, false
	}
	slices.Sort(ts)
	var sent []int64
	var total int64
	for _, s := range tl.Series {
		for i, v := range s.Requests {
			for len(sent) <= i {
				sent = append(sent, 0)
			}
			sent[i] += v
			total += v
		}
	}
	if total == 0 {
		return 0, 0, false
	}
	step := int64(tl.IntervalS * 1e9)
	var cum int64
	var runMed int64
	for i, v := range sent {
		if cum+v >= (total+1)/2 {
			// Within the interval, in proportion.
			frac := float64((total+1)/2-cum) / float64(max(v, 1))
			runMed = tl.Start.UnixNano() + int64(i)*step + int64(frac*float64(step))
			break
		}
		cum += v
	}
	return ts[len(ts)/2] - runMed, int64(len(ts)), true
}

// portDeltas pairs every trail request with the held lines of its client
// port, within MaxOffset: the deltas of every pair.
func (j *Joiner) portDeltas() []int64 {
	byPort := j.heldByPort()
	var ds []int64
	limit := int64(j.opt.MaxOffset)
	if j.noZone {
		limit += int64(maxZone)
	}
	for i := range j.trail {
		r := &j.trail[i]
		for _, hi := range byPort[r.Port] {
			h := &j.held[hi]
			if !j.plausible(h, r.endpoint) {
				continue
			}
			if d := h.t - h.expected(&r.TrailRequest); d >= -limit && d <= limit {
				ds = append(ds, d)
			}
			if len(ds) > 1_000_000 {
				return ds
			}
		}
	}
	return ds
}

// plausible reports whether a line may be a request to endpoint ep: a
// client reaches an address of its own family, so a line from an IPv4
// client is no request to an IPv6 endpoint (nor the reverse).
func (j *Joiner) plausible(h *held, ep int) bool {
	if len(j.opt.Clients) > 0 && !j.given[h.client] {
		return false // not a client the user named
	}
	a, err := netip.ParseAddr(j.clients.list[h.client])
	if err != nil {
		return true
	}
	return familyOf(a.String()) == j.rep.Endpoints[ep].Family
}

func (j *Joiner) heldByPort() map[uint16][]int {
	m := map[uint16][]int{}
	for i := range j.held {
		if h := &j.held[i]; h.port != 0 && h.trail < 0 {
			m[h.port] = append(m[h.port], i)
		}
	}
	return m
}

// tolerance is how far from its expected time a line of the run may lie:
// the spread of the offset, the log's resolution, and when a log stamps
// ends without a duration, the longest latency of the run.
func (j *Joiner) tolerance(out *Join) int64 {
	tol := int64(out.Offset.SpreadMS*1e6) + int64(j.resMax) + int64(100*time.Millisecond)
	if !out.Offset.Measured {
		tol += int64(time.Second)
	}
	for i := range j.held {
		if j.held[i].atEnd {
			tol += int64(j.rep.Totals.LatencyMS.Max * 1e6)
			break
		}
	}
	return tol
}

// matchPorts matches each trail request with a client port to the
// nearest held line of that port within tol of its expected time, among
// the lines of the clients allow holds (nil: any). It reports whether any
// matched.
func (j *Joiner) matchPorts(off, tol int64, allow map[uint32]bool) bool {
	if !j.portsLogged {
		return false
	}
	for i := range j.held {
		if h := &j.held[i]; h.how == placedPort {
			h.how, h.trail, h.endpoint = placedNo, -1, -1
		}
	}
	any := false
	byPort := j.heldByPort()
	// A request whose line its ID placed has its line: another client's
	// line of the same port number is not it.
	byID := make([]bool, len(j.trail))
	for i := range j.held {
		if h := &j.held[i]; h.how == placedID && h.trail >= 0 {
			byID[h.trail] = true
		}
	}
	for i := range j.trail {
		r := &j.trail[i]
		if r.Port == 0 || byID[i] {
			continue
		}
		best, bestD := -1, tol+1
		for _, hi := range byPort[r.Port] {
			h := &j.held[hi]
			if h.trail >= 0 || h.how == placedID || allow != nil && !allow[h.client] || j.unknownClient(h) || !j.plausible(h, r.endpoint) {
				continue
			}
			d := h.t - off - h.expected(&r.TrailRequest)
			if d < 0 {
				d = -d
			}
			if d < bestD {
				best, bestD = hi, d
			}
		}
		if best >= 0 {
			h := &j.held[best]
			h.trail, h.how, h.endpoint = int32(i), placedPort, int32(r.endpoint)
			any = true
		}
	}
	return any
}

// unknownClient reports whether h's client is one of those past
// maxClients, which nothing tells from the run's.
func (j *Joiner) unknownClient(h *held) bool {
	i, ok := j.clients.idx[othersName]
	return ok && h.client == i
}

// portClients are the clients of at least 5% of the lines matched by
// port; nil when that is every client matched.
func (j *Joiner) portClients() map[uint32]bool {
	n := map[uint32]int{}
	total := 0
	for i := range j.held {
		if h := &j.held[i]; h.how == placedPort {
			n[h.client]++
			total++
		}
	}
	allow := map[uint32]bool{}
	for c, k := range n {
		if k*20 >= total {
			allow[c] = true
		}
	}
	if len(allow) == len(n) {
		return nil
	}
	return allow
}

// runClients are the client addresses of the run: those given, else those
// of the lines matched, else the run's own local addresses.
func (j *Joiner) runClients() map[uint32]bool {
	m := map[uint32]bool{}
	for _, a := range j.opt.Clients {
		if i, ok := j.clients.idx[a.Unmap().String()]; ok {
			m[i] = true
		}
	}
	if len(j.opt.Clients) > 0 {
		return m
	}
	for i := range j.held {
		if h := &j.held[i]; h.how != placedNo && !j.unknownClient(h) {
			m[h.client] = true
		}
	}
	if len(m) > 0 {
		return m
	}
	for _, s := range j.rep.Client.LocalAddresses {
		if a, err := netip.ParseAddr(s); err == nil {
			if i, ok := j.clients.idx[a.Unmap().String()]; ok {
				m[i] = true
			}
		}
	}
	return m
}

// endpointOf places a line of the run on an endpoint: by the address and
// port it came to, else its client port; -1 when neither tells.
func (j *Joiner) endpointOf(h *held) int {
	if h.server != 0 {
		if e, ok := j.servers[j.serverList[h.server]]; ok && e >= 0 {
			return e
		}
	}
	if e, ok := j.ports[h.port]; ok && e >= 0 && h.port != 0 {
		return e
	}
	// A client reaches an address of its own family: when the run has
	// one endpoint of the client's family, the line came through it.
	if a, err := netip.ParseAddr(j.clients.list[h.client]); err == nil {
		if e, ok := j.byFamily[familyOf(a.String())]; ok && e >= 0 {
			return e
		}
	}
	return -1
}

// learnListeners places the lines still without an endpoint by their
// listener, where every placed line of that listener came through one
// endpoint.
func (j *Joiner) learnListeners() {
	seen := map[uint32]int{}
	for i := range j.held {
		h := &j.held[i]
		if h.how == placedNo || h.endpoint < 0 || h.listener == 0 {
			continue
		}
		if e, ok := seen[h.listener]; !ok {
			seen[h.listener] = int(h.endpoint)
		} else if e != int(h.endpoint) {
			seen[h.listener] = -1
		}
	}
	for i := range j.held {
		h := &j.held[i]
		if h.how != placedNo && h.endpoint < 0 {
			if e, ok := seen[h.listener]; ok && e >= 0 {
				h.endpoint = int32(e)
			}
		}
	}
}

// failed reports whether a line's request failed, as the run counts
// failures: a status of its --fail-status, or none at all.
func (j *Joiner) failed(h *held) bool { return h.status <= 0 || j.fail.Fails(int(h.status)) }

// tally counts the placed lines by scope, and what of the run is missing.
func (j *Joiner) tally(out *Join, off int64) {
	eps := j.endpoints()
	scopes := [3]map[uint32]*Scope{{}, {}, {}}
	for i := range j.held {
		if h := &j.held[i]; h.how != placedNo {
			j.countLine(h, eps, &scopes)
		}
	}
	for _, at := range []*[]string{&j.lines.NoEndpointAt, &j.lines.DuplicatesAt, &j.lines.NoKnownEndpointAt} {
		if *at == nil {
			*at = []string{}
		}
	}
	out.Lines = j.lines
	lists := [3]*[]Scope{&out.Backends, &out.Instances, &out.Listeners}
	for k := range scopes {
		*lists[k] = []Scope{}
		if len(scopes[k]) == 1 && scopes[k][0] != nil && (k > 0 || !j.logged.Has(accesslog.FieldBackend)) {
			continue // the log names no backend, instance or listener: no scope
		}
		for _, s := range scopes[k] {
			s.FailureRate = rate(s.Failed, s.Requests)
			*lists[k] = append(*lists[k], *s)
		}
		sortScopes(*lists[k])
	}
	for i := range eps {
		if eps[i].Requests > eps[i].Logged {
			eps[i].Missing = eps[i].Requests - eps[i].Logged
		}
	}
	out.Endpoints = eps
	j.missing(&out.Missing, off)
}

// endpoints are the join's rows of the report's endpoints, with the
// failures of each that the run's trail holds.
func (j *Joiner) endpoints() []Endpoint {
	eps := make([]Endpoint, len(j.rep.Endpoints))
	for i := range j.rep.Endpoints {
		e := &j.rep.Endpoints[i]
		eps[i] = Endpoint{Target: clean(e.Target), Address: clean(e.Address), Family: e.Family, Requests: e.Requests, Failed: e.Failed, Backends: map[string]int64{}}
	}
	for i := range j.trail {
		if j.trail[i].Failed {
			eps[j.trail[i].endpoint].TrailFailed++
		}
	}
	return eps
}

// countLine counts a placed line: how it was placed, its endpoint, the
// trail's request it matched, and its backend, instance and listener.
func (j *Joiner) countLine(h *held, eps []Endpoint, scopes *[3]map[uint32]*Scope) {
	failed := j.failed(h)
	j.lines.Run++
	if failed {
		j.lines.Failed++
		if h.reason != 0 {
			st := "none"
			if h.status > 0 {
				st = strconv.Itoa(int(h.status))
			}
			if j.failReasons == nil {
				j.failReasons = map[string]map[uint32]int64{}
			}
			if j.failReasons[st] == nil {
				j.failReasons[st] = map[uint32]int64{}
			}
			j.failReasons[st][h.reason]++
		}
	}
	pl := &Placed{} // the line's log's counts
	if int(h.file) < len(j.logs) {
		pl = &j.logs[h.file].Placed
	}
	switch h.how {
	case placedID:
		j.lines.ByRequestID++
		pl.ByRequestID++
	case placedPort:
		j.lines.ByPort++
		pl.ByClientPort++
	case placedWindow:
		j.lines.ByWindow++
		pl.ByClientAddress++
	}
	label := "?"
	if h.endpoint < 0 {
		j.lines.NoEndpoint++
		if len(j.lines.NoEndpointAt) < maxListed {
			j.lines.NoEndpointAt = append(j.lines.NoEndpointAt, j.files[h.file]+":"+strconv.FormatInt(h.line, 10))
		}
	} else {
		e := &eps[h.endpoint]
		label = e.Address
		e.Logged++
		if failed {
			e.LoggedFailed++
		}
		if j.logged.Has(accesslog.FieldBackend) && j.namesBackend[h.file] {
			e.Backends[orNone(j.backends.list[h.backend])]++
		}
	}
	runFailed := false
	if h.trail >= 0 {
		t := &j.trail[h.trail]
		t.matched = true
		if t.Failed {
			runFailed = true
			eps[t.endpoint].FailedMatched++
		}
	}
	for k, key := range [3]uint32{h.backend, h.instance, h.listener} {
		if k == 0 && !j.namesBackend[h.file] {
			continue
		}
		s := scopes[k][key]
		if s == nil {
			s = j.newScope(k, key)
			scopes[k][key] = s
		}
		s.Requests++
		st := "none"
		if h.status > 0 {
			st = strconv.Itoa(int(h.status))
		}
		s.Status[st]++
		if failed {
			s.Failed++
		}
		if b := j.statuses.list[h.bstatus]; b != "" {
			if s.BackendStatus == nil {
				s.BackendStatus = map[string]int64{}
			}
			s.BackendStatus[b]++
		}
		if r := j.reasons.list[h.reason]; r != "" {
			if s.Reasons == nil {
				s.Reasons = map[string]int64{}
			}
			s.Reasons[r]++
		}
		s.Endpoints[label]++
		if runFailed {
			s.RunFailed++
		}
	}
}

// newScope is the empty scope of the backend (k 0), instance (1) or
// listener (2) named key.
func (j *Joiner) newScope(k int, key uint32) *Scope {
	name := [3]*names{j.backends, j.instances, j.listeners}[k].list[key]
	if name == "" {
		name = "(none)"
	}
	s := &Scope{Name: name, Status: map[string]int64{}, Endpoints: map[string]int64{}, P: 1}
	if k == 0 {
		s.Family = j.backendFam[key]
		if s.Family == "" {
			s.Family = familyOf(name)
		}
	}
	return s
}

// missing says what of the run no line was placed for: requests, the
// trail's requests no line matched, and when (the gaps).
func (j *Joiner) missing(m *Missing, off int64) {
	m.Requests = max(0, j.rep.Totals.Requests-j.lines.Run)
	m.IDs, m.Gaps = []string{}, []Gap{}
	m.Sampled = j.sampled
	if j.idsLogged || j.portsLogged {
		for i := range j.trail {
			t := &j.trail[i]
			if t.matched || (!j.idsLogged && t.Port == 0) {
				continue
			}
			m.Trail++
			if len(m.IDs) < maxListed {
				id := t.RequestID
				if id == "" {
					id = "port " + strconv.Itoa(int(t.Port)) + " at " + t.At.UTC().Format("15:04:05.000")
				}
				m.IDs = append(m.IDs, clean(id))
			}
		}
	}
	// A sample has stretches without a line by its nature: no gap of
	// it says the gateway did not log.
	if m.Requests > 0 && !j.sampled {
		m.Gaps = j.gaps(off)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func rate(k, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

func sortScopes(s []Scope) {
	sort.Slice(s, func(a, b int) bool {
		if s[a].Failed != s[b].Failed {
			return s[a].Failed > s[b].Failed
		}
		if s[a].Requests != s[b].Requests {
			return s[a].Requests > s[b].Requests
		}
		return s[a].Name < s[b].Name
	})
}

// familyOf is the address family of a backend named "ip:port" or "ip";
// "" for a name.
func familyOf(name string) string {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(name, "["), "]"))
	if err != nil {
		ap, err := netip.ParseAddrPort(name)
		if err != nil {
			return ""
		}
		a = ap.Addr()
	}
	return words.FamilyOf(a)
}

// gaps are the timeline's intervals with requests sent and no line of the
// run logged, joined into stretches.
func (j *Joiner) gaps(off int64) []Gap {
	tl := j.rep.Timeline
	if tl.IntervalS <= 0 || len(tl.Series) == 0 {
		return []Gap{}
	}
	step := int64(tl.IntervalS * 1e9)
	n := 0
	for _, s := range tl.Series {
		n = max(n, len(s.Requests))
	}
	sent := make([]int64, n)
	for _, s := range tl.Series {
		for i, v := range s.Requests {
			sent[i] += v
		}
	}
	logged := make([]int64, n)
	t0 := tl.Start.UnixNano()
	for i := range j.held {
		h := &j.held[i]
		if h.how == placedNo {
			continue
		}
		t := h.t - off
		if h.atEnd && h.lat > 0 {
			t -= h.lat
		}
		if k := (t - t0) / step; t >= t0 && k < int64(n) {
			logged[k]++
		}
	}
	// A line stamped to the second may fall into the next interval: an
	// interval counts as logged when it or a neighbour holds lines, as
	// long as the log's resolution is coarser than the interval.
	coarse := int64(j.resMax) >= step
	out := []Gap{}
	for i := 0; i < n; i++ {
		has := logged[i] > 0 || coarse && (i > 0 && logged[i-1] > 0 || i+1 < n && logged[i+1] > 0)
		if has || sent[i] == 0 {
			continue
		}
		k := i
		var reqs int64
		for k < n && sent[k] > 0 && !(logged[k] > 0 || coarse && (k+1 < n && logged[k+1] > 0)) {
			reqs += sent[k]
			k++
		}
		if k == i {
			continue
		}
		out = append(out, Gap{From: report.Time{Time: time.Unix(0, t0+int64(i)*step).UTC()}, To: report.Time{Time: time.Unix(0, t0+int64(k)*step).UTC()}, Requests: reqs})
		if len(out) >= maxListed {
			break
		}
		i = k
	}
	return out
}

// Describe is a Join's one-line summary of an offset, for renderers.
func (o Offset) Describe() string {
	if !o.Measured {
		return "not measured: " + o.Why
	}
	s := fmt.Sprintf("%+.0f ms ± %.0f ms (gateway − pinprobe), from %d line%s matched by %s", o.MS, o.SpreadMS, o.Pairs, words.Plural(int(o.Pairs)), o.By)
	if o.By == "time" {
		s = fmt.Sprintf("%+.0f ms ± %.0f ms (gateway − pinprobe), from the times of %d line%s against the run's (%s)", o.MS, o.SpreadMS, o.Pairs, words.Plural(int(o.Pairs)), o.Why)
	}
	if o.NoZone {
		s += "; the log writes local times without a zone, so this includes the gateway's zone"
	}
	return s
}
