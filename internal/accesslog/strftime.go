package accesslog

import (
	"strings"
	"time"
)

// layoutStrftime marks a timePart whose layout is a strftime(3) format
// (timePart.strf): HAProxy's utime/ltime converters, Envoy's
// %START_TIME(format)%.
const layoutStrftime = "strftime"

// maxStrftime bounds a strftime format pinprobe reads.
const maxStrftime = 256

// strftimeOK reports whether pinprobe reads every conversion of the
// strftime format f; bad is the first it does not ("%U").
func strftimeOK(f string) (bad string, ok bool) {
	if len(f) > maxStrftime {
		return "a format of " + itoa(len(f)) + " bytes", false
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
	year, month, day, hour, minute, sec, nsec := 1970, 1, 1, 0, 0, 0, 0
	pm, hour12 := -1, false
	zone, hasZone := 0, false
	epoch, hasEpoch := int64(0), false
	res = 24 * time.Hour
	fine := func(d time.Duration) {
		if d < res {
			res = d
		}
	}
	j := 0
	num := func(maxDigits int) (int, bool) {
		if j < len(v) && v[j] == ' ' && maxDigits == 2 {
			j++ // %e, and a space-padded field
			maxDigits = 1
		}
		k, n := j, 0
		for j < len(v) && j-k < maxDigits && v[j] >= '0' && v[j] <= '9' {
			n = n*10 + int(v[j]-'0')
			j++
		}
		return n, j > k
	}
	word := func(names []string, size int) (int, bool) {
		for i, name := range names {
			if len(v)-j >= len(name) && strings.EqualFold(v[j:j+len(name)], name) {
				j += len(name)
				return i, true
			}
			if size > 0 && len(v)-j >= size && strings.EqualFold(v[j:j+size], name[:size]) {
				j += size
				return i, true
			}
		}
		return 0, false
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			if j >= len(v) || v[j] != f[i] {
				return time.Time{}, 0, false, false
			}
			j++
			continue
		}
		spec, n := strftimeSpec(f[i+1:])
		if spec == 0 {
			return time.Time{}, 0, false, false
		}
		ext := f[i+1 : i+n] // "3", "E3", "E*"
		i += n
		var good bool
		switch spec {
		case 'Y':
			year, good = num(4)
			fine(365 * 24 * time.Hour)
		case 'y':
			year, good = num(2)
			year += 2000
			if year >= 2069 {
				year -= 100
			}
		case 'm':
			month, good = num(2)
			fine(28 * 24 * time.Hour)
		case 'd', 'e':
			day, good = num(2)
			fine(24 * time.Hour)
		case 'j':
			var yd int
			yd, good = num(3)
			month, day = 1, yd
			fine(24 * time.Hour)
		case 'H':
			hour, good = num(2)
			fine(time.Hour)
		case 'I':
			hour, good = num(2)
			hour12 = true
			fine(time.Hour)
		case 'M':
			minute, good = num(2)
			fine(time.Minute)
		case 'S':
			sec, good = num(2)
			fine(time.Second)
			if strings.HasPrefix(ext, "E") && good && j < len(v) && v[j] == '.' {
				j++
				nsec, good = fraction(v, &j, &res)
			}
		case 'N', 'f':
			nsec, good = fraction(v, &j, &res)
		case 's':
			k := j
			for j < len(v) && j-k < 12 && v[j] >= '0' && v[j] <= '9' {
				epoch = epoch*10 + int64(v[j]-'0')
				j++
			}
			good, hasEpoch = j > k, true
			fine(time.Second)
		case 'p':
			pm, good = word([]string{"AM", "PM"}, 0)
		case 'b', 'h', 'B':
			var m int
			m, good = word(longMonths, 3)
			month = m + 1
			fine(28 * 24 * time.Hour)
		case 'a', 'A':
			_, good = word(longDays, 3)
		case 'z':
			zone, good = zoneOffset(v, &j)
			hasZone = good
		case 'Z':
			k := j
			for j < len(v) && j-k < 6 && (v[j] >= 'A' && v[j] <= 'Z') {
				j++
			}
			good = j > k
			if z := v[k:j]; z == "UTC" || z == "GMT" || z == "Z" {
				zone, hasZone = 0, true
			}
		case 'n', 't':
			for j < len(v) && (v[j] == ' ' || v[j] == '\t' || v[j] == '\n') {
				j++
			}
			good = true
		case '%':
			good = j < len(v) && v[j] == '%'
			j++
		}
		if !good {
			return time.Time{}, 0, false, false
		}
	}
	if j != len(v) {
		return time.Time{}, 0, false, false
	}
	if hour12 {
		if hour < 1 || hour > 12 {
			return time.Time{}, 0, false, false
		}
		hour %= 12
		if pm == 1 {
			hour += 12
		}
	}
	if month < 1 || month > 12 || day < 1 || day > 366 || day > 31 && month != 1 || hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}, 0, false, false
	}
	loc := time.UTC
	if hasZone && zone != 0 {
		loc = time.FixedZone("", zone)
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)
	if hasEpoch {
		t = time.Unix(epoch, int64(nsec))
	}
	if t.Before(minTime) || !t.Before(maxTime) {
		return time.Time{}, 0, false, false
	}
	return t.UTC(), res, !utc && !hasZone && !hasEpoch, true
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

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
