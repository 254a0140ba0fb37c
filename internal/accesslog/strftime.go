package accesslog

import (
	"strconv"
	"strings"
	"time"
)

// layoutStrftime marks a timePart whose layout is a strftime(3) format
// (timePart.strf): HAProxy's utime/ltime converters, Envoy's
// %START_TIME(format)%.
const layoutStrftime = "strftime"

// strftimeShape is the shape of the times a strftime format writes: a
// token, or text where it writes a space.
func strftimeShape(f string) shape {
	if strings.ContainsAny(f, " \t") {
		return shapeText
	}
	return shapeToken
}

// maxStrftime bounds a strftime format pinprobe reads.
const maxStrftime = 256

// strftimeOK reports whether pinprobe reads every conversion of the
// strftime format f; bad is the first it does not ("%U").
func strftimeOK(f string) (bad string, ok bool) {
	if len(f) > maxStrftime {
		return "a format of " + strconv.Itoa(len(f)) + " bytes", false
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		spec, n := strftimeSpec(f[i+1:])
		if spec == 0 || !strings.ContainsRune("YymdejHIMSpbhBaAzZTFDRsNfnt%", rune(spec)) {
			end := min(len(f), i+1+max(n, 1))
			return f[i:end], false
		}
		i += n
	}
	return "", true
}

// strftimeSpec reads the conversion after a %: its letter and how many
// bytes it takes ("3N" → 'N', 2; "E3S" → 'f'+seconds is told by the
// caller; "Ez" → 'z', 2). A width (HAProxy's %3N, Envoy's %6f) is read
// and ignored: the digits of a fraction are read as many as they come.
func strftimeSpec(s string) (byte, int) {
	n := 0
	for n < len(s) && n < 2 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n < len(s) && s[n] == 'E' && n+1 < len(s) {
		// absl's %E#S, %E*S (seconds with a fraction), %E4Y, %Ez.
		n++
		for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] == '*') {
			n++
		}
	}
	if n >= len(s) {
		return 0, n
	}
	return s[n], n + 1
}

// parseStrftime reads v as written by strftime(3) with format f: in UTC
// when utc, else in the gateway's local time, read as UTC (noZone) unless
// the format writes the offset (%z). res is the finest unit it holds.
// Every read is bounded by the format; nothing in v can make it loop.
func parseStrftime(v, f string, utc bool) (t time.Time, res time.Duration, noZone, ok bool) {
	f = expandStrftime(f)
	r := strftimeReader{v: v, year: 1970, month: 1, day: 1, pm: -1, res: 24 * time.Hour}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			if r.j >= len(v) || v[r.j] != f[i] {
				return time.Time{}, 0, false, false
			}
			r.j++
			continue
		}
		spec, n := strftimeSpec(f[i+1:])
		if spec == 0 || !r.field(spec, f[i+1:i+n]) { // ext: "3", "E3", "E*"
			return time.Time{}, 0, false, false
		}
		i += n
	}
	if t, ok = r.time(); !ok {
		return time.Time{}, 0, false, false
	}
	return t, r.res, !utc && !r.hasZone && !r.hasEpoch, true
}

// strftimeReader is a strftime value read so far: its fields, where in v
// it is (j), and the finest unit read (res).
type strftimeReader struct {
	v                                         string
	j                                         int
	year, month, day, hour, minute, sec, nsec int
	pm                                        int // -1 none, 0 AM, 1 PM
	hour12, hasZone, hasEpoch                 bool
	zone                                      int
	epoch                                     int64
	res                                       time.Duration
}

// fine notes a unit the value holds.
func (r *strftimeReader) fine(d time.Duration) { r.res = min(r.res, d) }

// num reads up to maxDigits digits (a space-padded field of two, %e).
func (r *strftimeReader) num(maxDigits int) (int, bool) {
	v := r.v
	if r.j < len(v) && v[r.j] == ' ' && maxDigits == 2 {
		r.j++
		maxDigits = 1
	}
	k, n := r.j, 0
	for r.j < len(v) && r.j-k < maxDigits && v[r.j] >= '0' && v[r.j] <= '9' {
		n = n*10 + int(v[r.j]-'0')
		r.j++
	}
	return n, r.j > k
}

// word reads one of names, whole or its first size letters, any case.
func (r *strftimeReader) word(names []string, size int) (int, bool) {
	v, j := r.v, r.j
	for i, name := range names {
		if len(v)-j >= len(name) && strings.EqualFold(v[j:j+len(name)], name) {
			r.j += len(name)
			return i, true
		}
		if size > 0 && len(v)-j >= size && strings.EqualFold(v[j:j+size], name[:size]) {
			r.j += size
			return i, true
		}
	}
	return 0, false
}

// field reads the conversion spec (with its extension ext) at r.j.
func (r *strftimeReader) field(spec byte, ext string) (good bool) {
	v := r.v
	switch spec {
	case 'Y':
		r.year, good = r.num(4)
		r.fine(365 * 24 * time.Hour)
	case 'y':
		r.year, good = r.num(2)
		r.year += 2000
		if r.year >= 2069 {
			r.year -= 100
		}
	case 'm':
		r.month, good = r.num(2)
		r.fine(28 * 24 * time.Hour)
	case 'd', 'e':
		r.day, good = r.num(2)
		r.fine(24 * time.Hour)
	case 'j':
		var yd int
		yd, good = r.num(3)
		r.month, r.day = 1, yd
		r.fine(24 * time.Hour)
	case 'H', 'I':
		r.hour, good = r.num(2)
		r.hour12 = r.hour12 || spec == 'I'
		r.fine(time.Hour)
	case 'M':
		r.minute, good = r.num(2)
		r.fine(time.Minute)
	case 'S':
		r.sec, good = r.num(2)
		r.fine(time.Second)
		if strings.HasPrefix(ext, "E") && good && r.j < len(v) && v[r.j] == '.' {
			r.j++
			r.nsec, good = fraction(v, &r.j, &r.res)
		}
	case 'N', 'f':
		r.nsec, good = fraction(v, &r.j, &r.res)
	case 's':
		k := r.j
		for r.j < len(v) && r.j-k < 12 && v[r.j] >= '0' && v[r.j] <= '9' {
			r.epoch = r.epoch*10 + int64(v[r.j]-'0')
			r.j++
		}
		good, r.hasEpoch = r.j > k, true
		r.fine(time.Second)
	case 'p':
		r.pm, good = r.word([]string{"AM", "PM"}, 0)
	case 'b', 'h', 'B':
		var m int
		m, good = r.word(longMonths, 3)
		r.month = m + 1
		r.fine(28 * 24 * time.Hour)
	case 'a', 'A':
		_, good = r.word(longDays, 3)
	case 'z':
		r.zone, good = zoneOffset(v, &r.j)
		r.hasZone = good
	case 'Z':
		k := r.j
		for r.j < len(v) && r.j-k < 6 && (v[r.j] >= 'A' && v[r.j] <= 'Z') {
			r.j++
		}
		good = r.j > k
		if z := v[k:r.j]; z == "UTC" || z == "GMT" || z == "Z" {
			r.zone, r.hasZone = 0, true
		}
	case 'n', 't':
		for r.j < len(v) && (v[r.j] == ' ' || v[r.j] == '\t' || v[r.j] == '\n') {
			r.j++
		}
		good = true
	case '%':
		good = r.j < len(v) && v[r.j] == '%'
		r.j++
	}
	return good
}

// time is the value read, once the whole of v was: in UTC, and within
// the times a log may hold.
func (r *strftimeReader) time() (time.Time, bool) {
	if r.j != len(r.v) {
		return time.Time{}, false
	}
	hour := r.hour
	if r.hour12 {
		if hour < 1 || hour > 12 {
			return time.Time{}, false
		}
		hour %= 12
		if r.pm == 1 {
			hour += 12
		}
	}
	if r.month < 1 || r.month > 12 || r.day < 1 || r.day > 366 || r.day > 31 && r.month != 1 || hour > 23 || r.minute > 59 || r.sec > 60 {
		return time.Time{}, false
	}
	loc := time.UTC
	if r.hasZone && r.zone != 0 {
		loc = time.FixedZone("", r.zone)
	}
	t := time.Date(r.year, time.Month(r.month), r.day, hour, r.minute, r.sec, r.nsec, loc)
	if r.hasEpoch {
		t = time.Unix(r.epoch, int64(r.nsec))
	}
	if t.Before(minTime) || !t.Before(maxTime) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// expandStrftime writes the compound conversions of f (%T, %R, %F, %D)
// as their parts.
func expandStrftime(f string) string {
	if !strings.ContainsAny(f, "TRFD") {
		return f
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] == '%' && i+1 < len(f) {
			if sub, ok := compoundStrftime[f[i+1]]; ok {
				b.WriteString(sub)
				i++
				continue
			}
			b.WriteString(f[i : i+2])
			i++
			continue
		}
		b.WriteByte(f[i])
	}
	return b.String()
}

var compoundStrftime = map[byte]string{'T': "%H:%M:%S", 'R': "%H:%M", 'F': "%Y-%m-%d", 'D': "%m/%d/%y"}

// fraction reads the digits of a fraction of a second at v[*j:], at most
// nine, as nanoseconds, and refines res to the last digit read.
func fraction(v string, j *int, res *time.Duration) (int, bool) {
	k, ns, unit := *j, 0, int(time.Second)
	for *j < len(v) && *j-k < 9 && v[*j] >= '0' && v[*j] <= '9' {
		unit /= 10
		ns += int(v[*j]-'0') * unit
		*j++
	}
	if *j == k {
		return 0, false
	}
	if d := time.Duration(unit); d < *res {
		*res = d
	}
	return ns, true
}

// zoneOffset reads a numeric offset at v[*j:]: +hhmm, +hh:mm or Z.
func zoneOffset(v string, j *int) (int, bool) {
	s := v[*j:]
	if strings.HasPrefix(s, "Z") {
		*j++
		return 0, true
	}
	if len(s) < 5 || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	digits := s[1:5]
	n := 5
	if s[3] == ':' && len(s) >= 6 {
		digits, n = s[1:3]+s[4:6], 6
	}
	off := 0
	for i := 0; i < 4; i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		off = off*10 + int(c-'0')
	}
	secs := (off/100)*3600 + (off%100)*60
	if off/100 > 14 || off%100 > 59 {
		return 0, false
	}
	if s[0] == '-' {
		secs = -secs
	}
	*j += n
	return secs, true
}

var (
	longMonths = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	longDays   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)
