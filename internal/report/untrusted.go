package report

import (
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/pinprobe/pinprobe/internal/words"
)

// Bounds on the numbers of a saved report. pinprobe writes none past them;
// a forged report could, and then every count, duration and timestamp a
// merge, a test or a chart computes from them could overflow.
const (
	// MaxCount is the largest count (and the largest of any other number
	// but durations) a saved report may hold: 2⁴⁰, about 1.1 trillion
	// requests, a year at 35,000 requests/s. Sums of a report's counts then
	// stay far from overflowing.
	MaxCount = 1 << 40
	// MaxBytes bounds a count of response bytes, which feeds no test:
	// 2⁵³, what a JSON number holds exactly.
	MaxBytes = 1 << 53
	// MaxSeconds bounds every duration in a report (the *_s fields, and
	// the *_ms ones in milliseconds): 100 years.
	MaxSeconds = 100 * 365.25 * 24 * 3600
)

// The timestamps a saved report may hold, besides the zero time of a field
// left unset: from 1970 (a machine whose clock was never set) to 2200, so
// the time between any two of them fits a time.Duration.
var (
	minReportTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxReportTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// cleanStrings makes every string of r that came from outside — all of
// them, in a report read back from a file — safe to keep and show: control
// characters and the invisible ones that reorder text are written out as
// \xNN or \u{NNNN} (words.SafeText), newlines and tabs kept in bodies
// only. Map keys are cleaned too; two keys that clean to the same one are
// added up (counts) or the first kept (anything else). Renderers still
// escape for their own format; this is what every one of them receives.
// Each document type cleans its own strings (the clean methods of
// clean.go); TestCleanEveryString proves none is left out.
func cleanStrings(r *Report) { r.clean() }

// cleanString cleans *s (see cleanStrings); multiline keeps newlines and
// tabs.
func cleanString(s *string, multiline bool) {
	if *s != "" {
		if c := words.SafeText(*s, multiline); c != *s {
			*s = c
		}
	}
}

// cleanAll cleans each string of ss.
func cleanAll(ss []string) {
	for i := range ss {
		cleanString(&ss[i], false)
	}
}

// cleanCounts cleans m's keys; counts whose keys clean to one are added.
func cleanCounts[M ~map[string]int64](m M) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if ck := words.SafeText(k, false); ck != k {
			n := m[k]
			delete(m, k)
			m[ck] += n
		}
	}
}

// cleanKeyed cleans m's keys and, with clean, its values; of values whose
// keys clean to one, the first (in key order) is kept.
func cleanKeyed[M ~map[string]V, V any](m M, clean func(*V)) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if clean != nil {
			clean(&v)
		}
		ck := words.SafeText(k, false)
		if ck != k {
			delete(m, k)
			if _, ok := m[ck]; ok {
				continue
			}
		}
		m[ck] = v
	}
}

// checkAddresses records in f what must be an address and is not: an endpoint's
// address (of the family it is filed under), a timeline series that is not
// its endpoint's, a sample's local and remote ip:port, the client's local
// addresses, the DNS answers and changes, and the addresses that failure
// kinds and instances count by. The families are "ipv4" and "ipv6", an
// endpoint's target is an http or https URL of its host and port, and a
// run ID is one.
func checkAddresses(r *Report, f *faults) {
	c := addrCheck{f}
	if !validRunID(r.RunID) {
		c.bad("run_id: %q is not a run ID (8 to 64 lower-case hex digits)", Shown(r.RunID))
	}
	for i, in := range r.Inputs {
		if !validRunID(in.RunID) {
			c.bad("inputs[%d].run_id: %q is not a run ID (8 to 64 lower-case hex digits)", i, Shown(in.RunID))
		}
	}
	for _, name := range words.SortedKeys(r.Families) {
		if name != "ipv4" && name != "ipv6" {
			c.bad("families: %q is not an address family (ipv4, ipv6)", Shown(name))
		}
	}
	for i := range r.Endpoints {
		c.endpoint(i, &r.Endpoints[i])
	}
	c.preflight(r)
	if len(r.Timeline.Series) == len(r.Endpoints) {
		for i, s := range r.Timeline.Series {
			if e := &r.Endpoints[i]; s.Target != e.Target || s.Address != e.Address {
				c.bad("timeline.series[%d]: %s (%q) is not its endpoint %s (%q)", i, Shown(s.Address), Shown(s.Target), Shown(e.Address), Shown(e.Target))
			}
		}
	}
	for i, a := range r.Client.LocalAddresses {
		c.addr(fmt.Sprintf("client.local_addresses[%d]", i), a)
	}
	for i, d := range r.DNS {
		for j, a := range d.Addresses {
			c.addr(fmt.Sprintf("dns[%d].addresses[%d]", i, j), a)
		}
		for j, ch := range d.Changes {
			for k, a := range ch.Added {
				c.addr(fmt.Sprintf("dns[%d].changes[%d].added[%d]", i, j, k), a)
			}
			for k, a := range ch.Removed {
				c.addr(fmt.Sprintf("dns[%d].changes[%d].removed[%d]", i, j, k), a)
			}
		}
	}
	for i := range r.Fingerprints {
		for a := range r.Fingerprints[i].Addresses {
			c.addr(fmt.Sprintf("fingerprints[%d].addresses", i), a)
		}
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		for _, m := range []struct {
			name string
			m    map[string]int64
		}{{"addresses", g.Addresses}, {"failed_by_address", g.FailedBy}} {
			for a := range m.m {
				c.addr(fmt.Sprintf("groups[%d].%s", i, m.name), a)
			}
		}
	}
}

// addrCheck records checkAddresses' faults.
type addrCheck struct{ *faults }

// addr refuses s, at where, unless it is an IP address.
func (c addrCheck) addr(where, s string) {
	if _, err := parseAddr(s); err != nil {
		c.bad("%s: %q is not an IP address", where, Shown(s))
	}
}

// addrPort refuses s, at where, unless it is empty or an IP address and
// port.
func (c addrCheck) addrPort(where, s string) {
	if ap, err := netip.ParseAddrPort(s); s != "" && (err != nil || !validZone(ap.Addr().Zone())) {
		c.bad("%s: %q is not an IP address and port", where, Shown(s))
	}
}

// endpoint checks endpoint i: its address of its family, its target an
// http or https URL of its host and port, its samples' addresses.
func (c addrCheck) endpoint(i int, e *Endpoint) {
	where := fmt.Sprintf("endpoints[%d]", i)
	a, err := parseAddr(e.Address)
	if err != nil {
		c.bad("%s: address %q is not an IP address", where, Shown(e.Address))
		return
	}
	if fam := words.FamilyOf(a); e.Family != fam {
		c.bad("%s: %s is an %s address, filed under family %q", where, Shown(e.Address), fam, Shown(e.Family))
	}
	u, err := url.Parse(e.Target)
	switch {
	case err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		c.bad("%s: target %q is not an http or https URL", where, Shown(e.Target))
	case u.Hostname() != e.Host:
		c.bad("%s: host %q is not the host of its target %q", where, Shown(e.Host), Shown(e.Target))
	case e.Port != urlPort(u):
		c.bad("%s: port %d is not the port of its target %q", where, e.Port, Shown(e.Target))
	}
	for j := range e.Samples {
		c.addrPort(fmt.Sprintf("%s.samples[%d].local", where, j), e.Samples[j].Local)
		c.addrPort(fmt.Sprintf("%s.samples[%d].remote", where, j), e.Samples[j].Remote)
	}
}

// preflight checks the preflight's checks: at most one per endpoint, each
// of an endpoint of the run, its address of its family, ok exactly when
// it has no error, of a known class.
func (c addrCheck) preflight(r *Report) {
	endpoint := map[[2]string]bool{}
	for i := range r.Endpoints {
		endpoint[[2]string{r.Endpoints[i].Target, r.Endpoints[i].Address}] = true
	}
	if len(r.Preflight) > len(r.Endpoints) {
		c.bad("preflight: %d checks of %d endpoints", len(r.Preflight), len(r.Endpoints))
	}
	for i, p := range r.Preflight {
		where := fmt.Sprintf("preflight[%d]", i)
		a, err := parseAddr(p.Address)
		switch {
		case err != nil:
			c.bad("%s: address %q is not an IP address", where, Shown(p.Address))
		case words.FamilyOf(a) != p.Family:
			c.bad("%s: %s is an %s address, filed under family %q", where, Shown(p.Address), words.FamilyOf(a), Shown(p.Family))
		case !endpoint[[2]string{p.Target, p.Address}]:
			c.bad("%s: %s (%q) is no endpoint of the run", where, Shown(p.Address), Shown(p.Target))
		case p.OK != (p.Error == "" && p.Class == "") || p.Class != "" && !errorClasses[p.Class]:
			c.bad("%s: ok %v with error class %q", where, p.OK, Shown(p.Class))
		}
		c.addrPort(where+".local", p.Local)
	}
}

// validRunID reports whether id is empty or a run ID: 8 to 64 lower-case
// hex digits (the engine draws 8).
func validRunID(id string) bool {
	if id == "" {
		return true
	}
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// parseAddr parses an IP address whose zone, if any, is an interface name.
func parseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err == nil && !validZone(a.Zone()) {
		err = fmt.Errorf("zone %q is not an interface name", Shown(a.Zone()))
	}
	return a, err
}

// validZone reports whether an address's zone is empty or an interface
// name: letters, digits, '.', '-' and '_', at most 64 of them. netip takes
// any text after the %.
func validZone(z string) bool {
	if len(z) > 64 {
		return false
	}
	for i := 0; i < len(z); i++ {
		if c := z[i]; !words.IsASCIIAlnum(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// urlPort is the port a URL names, or its scheme's.
func urlPort(u *url.URL) uint16 {
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return uint16(p)
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// HDRInflation bounds how much a saved report's histograms may inflate
// to, as a multiple of the report's size: each is a zlib stream, and 60
// bytes of one can stand for 200 kB of counts. pinprobe's own inflate to
// a fraction of the report.
const HDRInflation = 64

// checkHDRBudget refuses a report whose histograms would inflate to more
// than HDRInflation times its size (size bytes), and 1 MiB: what reading,
// merging and judging it decode is then bounded by what was read. Each
// header is read, not its payload; a histogram that does not decode is
// left to CheckSaved, which names its place.
func checkHDRBudget(r *Report, size int) error {
	limit := HDRInflation*int64(size) + 1<<20
	var total int64
	add := func(enc string, g *histGeometry) bool {
		if enc == "" {
			return true
		}
		if n, err := payloadLen(enc, g); err == nil {
			total += int64(n)
		}
		return total <= limit
	}
	ok := add(r.Totals.HDR, latencyGeometry)
	for _, s := range r.Families {
		ok = ok && (s == nil || add(s.HDR, latencyGeometry))
	}
	for i := range r.Endpoints {
		e := &r.Endpoints[i]
		ok = ok && add(e.HDR, latencyGeometry) && add(e.Phases.Connect.HDR, phaseGeometry) &&
			add(e.Phases.TLS.HDR, phaseGeometry) && add(e.Phases.TTFB.HDR, phaseGeometry)
	}
	for i := range r.Groups {
		ok = ok && add(r.Groups[i].HDR, latencyGeometry)
	}
	if !ok {
		return fmt.Errorf("its histograms inflate to more than %d times its size: not a report pinprobe wrote", HDRInflation)
	}
	return nil
}

// shownMax is how many characters of a value from a file a refusal quotes.
const shownMax = 64

// Shown is s as a refusal quotes it: cut to shownMax characters and "…",
// so the one-line error of a hand-edited report stays one line whatever
// the file holds (a vantage of 5,000 characters was echoed whole).
func Shown(s string) string {
	n := 0
	for i := range s {
		if n == shownMax {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
