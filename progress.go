package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/pinprobe/pinprobe/internal/collect"
	"github.com/pinprobe/pinprobe/internal/probe"
	"github.com/pinprobe/pinprobe/internal/words"
)

// worstAfter is how long a run lasts before the live view lists its worst
// addresses under the bar.
const worstAfter = 3 * time.Second

// progressBar is the live view on a terminal while a run lasts: a bar of
// time, requests and failures per family, and after a few seconds the rate,
// p50/p99 and worst addresses under it. It leaves nothing on the screen.
type progressBar struct {
	f    *os.File
	c    *config
	stop chan struct{}
	done chan struct{}
}

// newProgressBar returns the live view for stderr, or nil when stderr is
// not a terminal.
func newProgressBar(w io.Writer, c *config) *progressBar {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(w) {
		return nil
	}
	return &progressBar{f: f, c: c, stop: make(chan struct{}), done: make(chan struct{})}
}

// Start draws the view until Finish.
func (p *progressBar) Start(ctx context.Context, live *collect.Live, sent func() int64, start time.Time) {
	c := p.c
	const steps = 1000
	total := int64(steps + 1) // never reached by Set: the view is cleared, not finished
	if c.duration == 0 && c.requests == 0 {
		total = -1 // spinner: no planned end
	}
	// The bar renders into its own state; the view writes it, with the
	// rows under it, in one write per frame.
	cells := 20 // the bar's own width: narrower on a narrow terminal
	if w, _, err := term.GetSize(int(p.f.Fd())); err == nil && w < 100 {
		cells = 10
	}
	noColor := os.Getenv("NO_COLOR") != ""
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(io.Discard),
		progressbar.OptionSetWidth(cells),
		progressbar.OptionEnableColorCodes(!noColor),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionSetTheme(progressbar.Theme{Saucer: "█", SaucerPadding: "░", BarStart: "", BarEnd: ""}),
	)
	go func() {
		defer close(p.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			elapsed := time.Since(start)
			frac := 0.0
			if c.duration > 0 {
				frac = float64(elapsed) / float64(c.duration)
			}
			if c.requests > 0 {
				frac = max(frac, float64(sent())/float64(c.requests))
			}
			stopped := ctx.Err() != nil || frac >= 1
			width, height := 80, 24
			if w, h, err := term.GetSize(int(p.f.Fd())); err == nil {
				width, height = w, h
			}
			// Below narrowBar columns the bar's cells give way to the
			// figures: the text alone, coloured here.
			narrow := width < narrowBar
			room := width - 1 - barPrefix(cells)
			if narrow {
				room = width - 1
			}
			text := describe(elapsed, c, live, sent(), stopped, room)
			if noColor {
				text = plainTags.Replace(text) // the bar reads its tags only in colour
			}
			bar.Describe(text)
			if total > 0 {
				_ = bar.Set64(int64(min(frac, 1) * steps))
			} else {
				_ = bar.Add(1)
			}
			line := bar.String()
			if narrow {
				line = ansiTags.Replace(text)
			}
			var rows []string
			if elapsed >= worstAfter {
				rows = append(rows, pace(c, live.Latency.Recent(time.Now(), start, liveWindow), width-1))
				rows = append(rows, worst(live.Endpoints(), min(5, height-5), width-1)...)
			}
			for i := range rows {
				if noColor {
					rows[i] = plainANSI.Replace(rows[i])
				}
			}
			p.draw(line, rows, width)
			select {
			case <-p.stop:
				fmt.Fprint(p.f, "\r\x1b[J")
				return
			case <-tick.C:
			}
		}
	}()
}

// draw writes one frame: the bar line and the rows under it, each cut to
// the width so none wraps, and puts the cursor back at the bar's start.
func (p *progressBar) draw(bar string, rows []string, width int) {
	var b strings.Builder
	b.WriteString("\r\x1b[J" + cutVisible(bar, width-1))
	for _, r := range rows {
		b.WriteString("\n" + cutVisible(r, width-1))
	}
	if len(rows) > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", len(rows))
	}
	b.WriteString("\r")
	fmt.Fprint(p.f, b.String())
}

// liveWindow is how many seconds the live view's rate and latencies are
// of.
const liveWindow = 5

// pace is the live view's line of how the run goes now: the rate
// achieved against the plan and the current p50/p99, of the requests that
// ended in the last seconds: "  30.0 req/s of 30 planned · p50 0.43ms ·
// p99 4.58ms  (last 5s)". A narrow terminal loses the words, never the
// figures.
func pace(c *config, w collect.LiveWindow, width int) string {
	if w.Requests == 0 {
		return fmt.Sprintf("  no request ended in the last %ds", w.Seconds)
	}
	rate := strconv.FormatFloat(w.Rate, 'f', 1, 64) + " req/s"
	planned := ""
	if !c.rate.max {
		planned = " of " + strconv.FormatFloat(c.rate.rate, 'f', -1, 64) + " planned"
	}
	ms := func(d time.Duration) string { return words.Latency(float64(d)/float64(time.Millisecond), 1) }
	lat := " · p50 " + ms(w.P50) + " · p99 " + ms(w.P99)
	last := fmt.Sprintf("  (last %ds)", w.Seconds)
	for _, try := range []string{"  " + rate + planned + lat + last, "  " + rate + planned + lat} {
		if utf8.RuneCountInString(try) <= width {
			return try
		}
	}
	return "  " + rate + lat
}

// worst lists up to n endpoints with failures, the highest failure ratio
// first: "✗ ::1 https://a/  1234 req  100.0% failed"; one line saying
// there is none yet when no endpoint has failed. A row fits width: the
// URL is shortened (its scheme, then its middle), never the figures.
func worst(eps []*collect.LiveEndpoint, n, width int) []string {
	if n <= 0 || len(eps) == 0 {
		return nil
	}
	type row struct {
		label, url string
		req, fail  int64
	}
	urls := map[string]bool{}
	for _, e := range eps {
		urls[e.Endpoint.Target.String()] = true
	}
	var rows []row
	short := shortTargets(eps)
	for _, e := range eps {
		r := row{label: e.Endpoint.Addr.String(), req: e.Requests.Load(), fail: e.Failed.Load()}
		if len(urls) > 1 {
			r.url = short[e.Endpoint.Target.String()]
		}
		if r.fail > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return []string{fmt.Sprintf("  no failure yet on %d endpoint%s", len(eps), words.Plural(len(eps)))}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if ra, rb := float64(a.fail)/float64(a.req), float64(b.fail)/float64(b.req); ra != rb {
			return ra > rb
		}
		return a.fail > b.fail
	})
	shown := rows[:min(n, len(rows))]
	// The figures take what they need; the address and URL the rest.
	req := 0
	for _, r := range shown {
		req = max(req, len(strconv.FormatInt(r.req, 10)))
	}
	figures := 2 + req + len(" req  ") + len("100.0% failed")
	room := max(width-len("  ✗ ")-figures, 12)
	label := 0
	for _, r := range shown {
		label = max(label, utf8.RuneCountInString(labelOf(r.label, r.url, room)))
	}
	out := []string{}
	for i, r := range rows {
		if i == n-1 && len(rows) > n {
			out = append(out, fmt.Sprintf("  … and %d more failing endpoints", len(rows)-i))
			break
		}
		out = append(out, fmt.Sprintf("  \x1b[31m✗ %-*s  %*d req  %5.1f%% failed\x1b[0m", label, labelOf(r.label, r.url, room),
			req, r.req, 100*float64(r.fail)/float64(r.req)))
	}
	return out
}

// labelOf names an endpoint in at most room runes: its address whole,
// then its URL, cut in the middle when it is too long.
func labelOf(addr, target string, room int) string {
	if target == "" {
		return addr
	}
	rest := room - utf8.RuneCountInString(addr) - 1
	if rest < 5 {
		return addr
	}
	return addr + " " + words.CutMiddle(target, rest)
}

// shortTargets names each URL of eps as short as tells them apart: the
// path alone when they share a scheme and host, else without the scheme;
// secrets redacted, as Target.String says them.
func shortTargets(eps []*collect.LiveEndpoint) map[string]string {
	out := map[string]string{}
	same := true
	first := eps[0].Endpoint.Target.URL
	for _, e := range eps {
		u := e.Endpoint.Target.URL
		same = same && u.Scheme == first.Scheme && u.Host == first.Host
	}
	for _, e := range eps {
		s := e.Endpoint.Target.String()
		out[s] = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
		if u, err := url.Parse(s); same && err == nil {
			out[s] = u.RequestURI()
		}
	}
	return out
}

// cutVisible cuts s to at most n visible runes, keeping its ANSI escape
// sequences (which take no room) and closing any colour it leaves open.
func cutVisible(s string, n int) string {
	var b strings.Builder
	visible := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := i + 1
			for j < len(s) && !(s[j] >= '@' && s[j] <= '~' && j > i+1) {
				j++
			}
			b.WriteString(s[i:min(j+1, len(s))])
			i = j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if visible == n {
			b.WriteString("\x1b[0m")
			break
		}
		b.WriteRune(r)
		visible++
		i += size
	}
	return b.String()
}

// describe is the bar's text, e.g. "12.4s/30s  1234 req  ipv4 ok  ipv6
// 310 failed (50%)", in at most width visible columns: past it the
// families lose their counts ("ipv6 50% failed"), then the in-flight
// count goes, then the families that do not fail, the requests and the
// planned duration, then the drops. The failure figures are never cut.
func describe(elapsed time.Duration, c *config, live *collect.Live, sent int64, stopped bool, width int) string {
	head := fmt.Sprintf("%.1fs", elapsed.Seconds())
	if c.duration > 0 {
		head += "/" + c.duration.String()
	}
	done := live.Requests.Load()
	head += fmt.Sprintf("  %d req", done)
	if c.requests > 0 {
		head += fmt.Sprintf("/%d", c.requests)
	}
	var full, short, failing []string // the families, with and without counts; the failing ones
	for _, fam := range []probe.Family{probe.IPv4, probe.IPv6} {
		n := live.FamilyRequests[fam].Load()
		if n == 0 {
			continue
		}
		f := live.FamilyFailed[fam].Load()
		if f == 0 {
			full, short = append(full, fmt.Sprintf("  %s ok", fam)), append(short, fmt.Sprintf("  %s ok", fam))
			continue
		}
		full = append(full, fmt.Sprintf("  [red]%s %d failed (%s)[reset]", fam, f, pctShort(f, n)))
		short = append(short, fmt.Sprintf("  [red]%s %s failed[reset]", fam, pctShort(f, n)))
		failing = append(failing, short[len(short)-1])
	}
	tail := ""
	if d := live.Dropped.Load(); d > 0 {
		tail += fmt.Sprintf("  [yellow]%d dropped[reset]", d)
	}
	flight := ""
	if inFlight := sent - done; stopped && inFlight > 0 {
		flight = fmt.Sprintf("  waiting for %d in flight (≤%s)", inFlight, c.timeout)
	} else if inFlight > 0 {
		flight = fmt.Sprintf("  %d in flight", inFlight)
	}
	fails := strings.Join(failing, "")
	tries := []string{
		head + strings.Join(full, "") + tail + flight,
		head + strings.Join(short, "") + tail + flight,
		head + strings.Join(short, "") + tail,
		head + fails + tail, // the families that fail
		fmt.Sprintf("%.1fs", elapsed.Seconds()) + fails + tail,
		strings.TrimPrefix(fails+tail, "  "),
		strings.TrimPrefix(fails, "  "), // the failure figures stay, whatever the width
	}
	for _, try := range tries[:len(tries)-1] {
		if visibleLen(try) <= width {
			return try
		}
	}
	return tries[len(tries)-1]
}

// narrowBar is the terminal width below which the live view drops the
// bar's cells for the figures.
const narrowBar = 60

// ansiTags turns the colour tags of a bar text into the codes the bar
// would write.
var ansiTags = strings.NewReplacer("[red]", "\x1b[31m", "[yellow]", "\x1b[33m", "[reset]", "\x1b[0m")

// plainTags removes the colour tags of a bar text.
var plainTags = strings.NewReplacer("[red]", "", "[yellow]", "", "[reset]", "")

// plainANSI removes the colour codes of a row under the bar.
var plainANSI = strings.NewReplacer("\x1b[31m", "", "\x1b[0m", "")

// visibleLen is the width of a bar text: its runes, less the colour tags.
func visibleLen(s string) int { return utf8.RuneCountInString(plainTags.Replace(s)) }

// barPrefix is the width of what a bar of cells draws before its text:
// "  100% ", the cells, two spaces, and one column to spare.
func barPrefix(cells int) int { return 7 + cells + 2 + 1 }

// pctShort formats f/n as a percentage in at most four characters: "100%", "4.5%", "0.1%".
func pctShort(f, n int64) string {
	v := 100 * float64(f) / float64(n)
	if v >= 10 || v == 0 {
		return fmt.Sprintf("%.0f%%", v)
	}
	return fmt.Sprintf("%.1f%%", v)
}

// Finish stops and clears the view, so the report starts on a clean screen.
func (p *progressBar) Finish() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.stop)
	<-p.done
}
