package accesslog

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Time layouts of the formats, and the special ones parseTime knows.
const (
	layoutCLF     = "02/Jan/2006:15:04:05 -0700" // nginx $time_local, HAProxy %trg/%trl/%T
	layoutHAProxy = "02/Jan/2006:15:04:05.000"   // HAProxy %tr, %t: local, no zone
	layoutISO     = "2006-01-02T15:04:05Z07:00"  // nginx $time_iso8601
	layoutNano    = time.RFC3339Nano             // ALB
	layoutUnix    = "unix"                       // seconds since 1970, with a fraction: nginx $msec
	layoutFlex    = "flex"                       // what Log Analytics exports write: see flexLayouts
	layoutRFC3164 = "Jan _2 15:04:05"            // a syslog header's, without a year
	layoutSyslog  = "2006-01-02T15:04:05.999999Z07:00"
)

// flexLayouts are the times Azure's exports write: ISO 8601 with up to
// seven decimals (KQL), with or without a zone (UTC when without), and
// the portal's CSV export ("6/16/2022, 8:43:00.123 PM").
var flexLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.9999999",
	"2006-01-02 15:04:05.9999999Z07:00",
	"2006-01-02 15:04:05.9999999",
	"1/2/2006, 3:04:05.999 PM",
	"1/2/2006 3:04:05.999 PM",
	"1/2/2006, 15:04:05.999",
	"1/2/2006 15:04:05.999",
}

// minTime and maxTime bound the times a log line may hold: what lies
// outside is no time of a request a run could have seen.
var (
	minTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// parseTime reads s in layout, in UTC; false when it does not parse or
// lies outside 1970 to 2200.
func parseTime(s, layout string) (time.Time, bool) {
	var t time.Time
	var err error
	switch layout {
	case layoutUnix:
		sec, frac, _ := strings.Cut(s, ".")
		n, e := strconv.ParseInt(sec, 10, 64)
		if e != nil || n < 0 || n > maxTime.Unix() || len(frac) > 9 {
			return time.Time{}, false
		}
		ns := 0
		if frac != "" {
			f, e := strconv.Atoi((frac + "000000000")[:9])
			if e != nil {
				return time.Time{}, false
			}
			ns = f
		}
		t = time.Unix(n, int64(ns))
	case layoutFlex:
		s = strings.TrimSpace(s)
		for _, l := range flexLayouts {
			if t, err = time.Parse(l, s); err == nil {
				break
			}
		}
	default:
		t, err = time.Parse(layout, s)
	}
	if err != nil || t.Before(minTime) || !t.Before(maxTime) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// seconds reads a duration in seconds ("0.034", "1"); false when it is
// not one, negative, or longer than a day.
func seconds(s string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 86400 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// whole reads a whole number of units ("12" ms, Traefik's ns); false
// when it is not one, negative (HAProxy's -1: not reached), or longer
// than a day.
func whole(s string, unit time.Duration) (time.Duration, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 || n > int64(24*time.Hour/unit) {
		return 0, false
	}
	return time.Duration(n) * unit, true
}
