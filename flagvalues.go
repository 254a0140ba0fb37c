// The pflag.Value types of pinprobe's flags: each parses and checks its
// value in Set, so a bad value is refused as the command line is read, and
// flagError words the refusal as `--name "VALUE": cause`.

package main

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pinprobe/pinprobe/internal/probe"
)

// rateValue is --rate: a positive number of requests per second, or "max".
type rateValue struct {
	rate float64
	max  bool
}

func (v *rateValue) String() string {
	if v.max {
		return "max"
	}
	return strconv.FormatFloat(v.rate, 'f', -1, 64)
}

func (v *rateValue) Set(s string) error {
	if strings.EqualFold(s, "max") {
		v.max, v.rate = true, 0
		return nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || !(r >= 0.001) || r > 1e7 {
		const want = `want requests per second from 0.001 to 10000000, or "max"`
		// A rate written with its unit ("50/s", "50rps") is the number alone.
		lower := strings.ToLower(strings.TrimSpace(s))
		for _, unit := range []string{"/s", "rps", "req/s", "/sec"} {
			if n, ok := strings.CutSuffix(lower, unit); ok {
				if r, err := strconv.ParseFloat(strings.TrimSpace(n), 64); err == nil && r >= 0.001 && r <= 1e7 {
					return fmt.Errorf("requests per second are the number alone, e.g. %q", strconv.FormatFloat(r, 'f', -1, 64))
				}
			}
		}
		return errors.New(want)
	}
	v.rate, v.max = r, false
	return nil
}

func (v *rateValue) Type() string { return "RATE" }

// choiceValue is a flag with a fixed set of values.
type choiceValue struct {
	value   string
	choices []string
}

func (v *choiceValue) String() string { return v.value }

func (v *choiceValue) Set(s string) error {
	for _, c := range v.choices {
		if s == c {
			v.value = s
			return nil
		}
	}
	// An empty choice (a default chosen otherwise) is not one to offer.
	named := slices.DeleteFunc(slices.Clone(v.choices), func(c string) bool { return c == "" })
	return fmt.Errorf("want one of %s", strings.Join(named, ", "))
}

func (v *choiceValue) Type() string { return "string" }

// resolveValue collects --resolve entries.
type resolveValue struct {
	entries map[string][]netip.Addr
	raw     []string
}

func (v *resolveValue) String() string { return strings.Join(v.raw, " ") }

func (v *resolveValue) Set(s string) error {
	key, addrs, err := probe.ParseResolve(s)
	if err != nil {
		return err
	}
	if v.entries == nil {
		v.entries = map[string][]netip.Addr{}
	}
	v.entries[key] = append(v.entries[key], addrs...)
	v.raw = append(v.raw, s)
	return nil
}

func (v *resolveValue) Type() string { return "HOST:PORT:ADDR" }

// headerValue collects -H entries in order.
type headerValue struct{ lines [][2]string }

func (v *headerValue) String() string { return "" }

func (v *headerValue) Set(s string) error {
	name, value, err := parseHeaderLine(s)
	if err != nil {
		return err
	}
	v.lines = append(v.lines, [2]string{name, value})
	return nil
}

func (v *headerValue) Type() string { return "HEADER" }

// connRequestsValue is --conn-requests: a number of requests, or "auto".
type connRequestsValue struct {
	n    int
	auto bool
}

func (v *connRequestsValue) String() string {
	if v.auto {
		return "auto"
	}
	return strconv.Itoa(v.n)
}

func (v *connRequestsValue) Set(s string) error {
	if strings.EqualFold(s, "auto") {
		v.auto, v.n = true, 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1000000 {
		return errors.New(`want a number of requests from 0 (unlimited) to 1000000, or "auto"`)
	}
	v.n, v.auto = n, false
	return nil
}

func (v *connRequestsValue) Type() string { return "N" }

// durationValue is a time.Duration flag whose refusal suggests values in
// the unit that flag is given in: a bare "800" is "800ms" for --max-p99 (a
// latency) but "800s" would be no help there, and "5" is "5s" for
// --duration. pflag's own duration flag says "30s" or "5m" for every flag.
type durationValue struct {
	d        *time.Duration
	unit     string    // what a bare number is suggested with: "ms" or "s"
	examples [2]string // two valid values, shown for any other refusal
}

// durationVarP declares a duration flag in fs whose refusals suggest
// values in unit, or examples.
func durationVarP(fs *pflag.FlagSet, p *time.Duration, name, shorthand string, value time.Duration, unit string, examples [2]string, usage string) {
	*p = value
	fs.VarP(&durationValue{d: p, unit: unit, examples: examples}, name, shorthand, usage)
}

// bareNumber is a number without a unit, which time.ParseDuration refuses
// (but for 0).
var bareNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

func (v *durationValue) String() string { return v.d.String() }

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err == nil:
		*v.d = d
		return nil
	case bareNumber.MatchString(s):
		return fmt.Errorf("a duration needs its unit, e.g. %q", s+v.unit)
	}
	return fmt.Errorf("must be a duration like %q or %q", v.examples[0], v.examples[1])
}

func (v *durationValue) Type() string { return "DURATION" }

// countValue is a whole-number flag (--requests, --concurrency, --samples)
// whose refusal says what it counts and suggests a value it accepts: the
// number meant, where a value is one written another way ("1e6", "10k",
// "1,000", "2.0"), or the flag's example. pflag's own says only "must be
// an integer".
type countValue[T int | int64] struct {
	n       *T
	noun    string // what it counts: "requests"
	example T      // a valid value, shown when none is meant
}

// countVarP declares a whole-number flag in fs counting noun.
func countVarP[T int | int64](fs *pflag.FlagSet, p *T, name, shorthand string, value T, noun string, example T, usage string) {
	*p = value
	fs.VarP(&countValue[T]{n: p, noun: noun, example: example}, name, shorthand, usage)
}

func (v *countValue[T]) String() string { return strconv.FormatInt(int64(*v.n), 10) }

func (v *countValue[T]) Set(s string) error {
	var zero T
	bits := 64
	if _, ok := any(zero).(int); ok {
		bits = strconv.IntSize
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err == nil {
		*v.n = T(n)
		return nil
	}
	example := strconv.FormatInt(int64(v.example), 10)
	if errors.Is(err, strconv.ErrRange) { // the command's own check says the range
		return fmt.Errorf("too large: want a whole number of %s, e.g. %q", v.noun, example)
	}
	if meant, ok := meantCount(s, bits); ok {
		example = meant
	}
	return fmt.Errorf("want a whole number of %s, e.g. %q", v.noun, example)
}

func (v *countValue[T]) Type() string { return "N" }

// meantCount reads s as the whole number it was probably meant to be,
// written with separators ("1,000", "1_000"), in floating-point ("1e6",
// "2.0") or with a k for thousands ("10k"), and returns it in digits.
func meantCount(s string, bits int) (string, bool) {
	s = strings.NewReplacer(",", "", "_", "").Replace(strings.TrimSpace(s))
	scale := 1.0
	if t, ok := strings.CutSuffix(strings.ToLower(s), "k"); ok {
		s, scale = t, 1000
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	f *= scale
	if f != math.Trunc(f) || math.Abs(f) >= math.Ldexp(1, bits-1) {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}
