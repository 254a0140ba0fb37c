package words

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// capitalize upper-cases the first letter of a sentence.
func Capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

var FamilyNames = map[string]string{"ipv4": "IPv4", "ipv6": "IPv6"}

// CapItems returns items when there are at most max of them, else the
// first max-1 and "N more" in place of the rest, so a list that names
// addresses stays one line: 200 addresses become 7 and "193 more".
func CapItems(items []string, max int) []string {
	if len(items) <= max {
		return items
	}
	return append(items[:max-1:max-1], fmt.Sprintf("%d more", len(items)-max+1))
}

// joinAnd joins "a", "b", "c" as "a, b and c".
func JoinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// alphaValue formats a significance level, rounded down to two significant
// digits so "needs p<…" stays true: 0.001/6 -> "0.00016".
func AlphaValue(a float64) string {
	e := math.Floor(math.Log10(a)) - 1
	k := math.Floor(a/math.Pow(10, e) + 1e-9)
	if e >= 0 {
		return strconv.FormatFloat(k*math.Pow(10, e), 'f', 0, 64)
	}
	out := strconv.FormatFloat(k*math.Pow(10, e), 'f', int(-e), 64)
	return strings.TrimRight(strings.TrimRight(out, "0"), ".")
}

func Dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// pValue formats a p-value for a sentence: "p<1e-9", "p=3.2e-05", "p=0.004".
func PValue(p float64) string {
	switch {
	case p < 1e-9:
		return "p<1e-9"
	case p < 0.001:
		return "p=" + strings.Replace(fmt.Sprintf("%.1e", p), "e-0", "e-", 1)
	default:
		return fmt.Sprintf("p=%.2g", p)
	}
}

// pctRate formats a rate as a percentage with up to one decimal: "100%", "4.5%", "0.05%".
func PctRate(r float64) string {
	v := r * 100
	switch {
	case v == 0 || v >= 10 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f%%", v)
	case v >= 1:
		return fmt.Sprintf("%.1f%%", v)
	default:
		return fmt.Sprintf("%.2g%%", v)
	}
}

// pctCeil formats an upper bound, rounded up so the sentence stays true: 0.498% -> "0.5%".
func PctCeil(r float64) string {
	v := r * 100
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f%%", math.Ceil(v))
	case v >= 1:
		return fmt.Sprintf("%.1f%%", math.Ceil(v*10)/10)
	default:
		// Two significant digits, rounded up: 0.498 -> 0.5, 0.0000299 -> 0.00003.
		e := int(math.Floor(math.Log10(v))) - 1
		k := math.Ceil(v/math.Pow(10, float64(e)) - 1e-9) // 10..100
		out := strconv.FormatFloat(k*math.Pow(10, float64(e)), 'f', -e, 64)
		return strings.TrimRight(strings.TrimRight(out, "0"), ".") + "%"
	}
}

// CIRange formats an interval of rates: "1.2–9.8%". Ends that would
// print alike (99.98% and 100% both "100%") are written with as many
// decimals as tell them apart: "99.9–100%".
func CIRange(lo, hi float64) string {
	l := PctRate(lo)
	if l == PctRate(hi) && lo < hi {
		for d := 1; d <= 6; d++ {
			if l = strconv.FormatFloat(math.Floor(lo*100*math.Pow(10, float64(d)))/math.Pow(10, float64(d)), 'f', d, 64) + "%"; l != PctRate(hi) {
				break
			}
		}
	}
	return strings.TrimSuffix(l, "%") + "–" + PctRate(hi)
}

// latency formats milliseconds with about three significant digits.
func Latency(v float64, n int64) string {
	switch {
	case n == 0:
		return "-"
	case v >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + "s"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64) + "ms"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64) + "ms"
	default:
		return strconv.FormatFloat(v, 'f', 2, 64) + "ms"
	}
}

// LatencyCeil is Latency of an upper bound: rounded up at the digits it
// shows, so "within" stays true (14.527 ms: "14.6ms").
func LatencyCeil(v float64) string {
	up := func(v float64, d int) float64 {
		p := math.Pow(10, float64(d))
		return math.Ceil(v*p-1e-9) / p
	}
	switch {
	case v >= 1000:
		return strconv.FormatFloat(up(v/1000, 2), 'f', 2, 64) + "s"
	case v >= 100:
		return strconv.FormatFloat(up(v, 0), 'f', 0, 64) + "ms"
	case v >= 10:
		return strconv.FormatFloat(up(v, 1), 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(up(v, 2), 'f', 2, 64) + "ms"
}

func Num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Count formats a count with thousands separators: "2,995", "1,000,000".
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// RunLength formats a duration a run should last, rounded up to a whole
// unit a flag takes: "45s", "5m", "2h30m".
func RunLength(d time.Duration) string {
	switch {
	case d <= time.Minute:
		return strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10) + "s"
	case d <= time.Hour:
		return strconv.FormatInt(int64(math.Ceil(d.Minutes())), 10) + "m"
	}
	m := int64(math.Ceil(d.Minutes()))
	if m%60 == 0 {
		return strconv.FormatInt(m/60, 10) + "h"
	}
	return strconv.FormatInt(m/60, 10) + "h" + strconv.FormatInt(m%60, 10) + "m"
}
