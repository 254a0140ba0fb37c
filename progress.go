package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"pinprobe/probe"
	"pinprobe/report"
)

// progressBar draws the live bar on a terminal while a run lasts: elapsed
// against planned, requests, failures per family, and once sending has
// stopped, the requests still in flight.
type progressBar struct {
	w    io.Writer
	c    *config
	stop chan struct{}
	done chan struct{}
}

func newProgressBar(w io.Writer, c *config) *progressBar {
	return &progressBar{w: w, c: c, stop: make(chan struct{}), done: make(chan struct{})}
}

// Start draws the bar until Finish.
func (p *progressBar) Start(ctx context.Context, live *report.Live, sent func() int64, start time.Time) {
	w, c := p.w, p.c
	const steps = 1000
	total := int64(steps + 1) // never reached by Set: the bar is cleared, not finished
	if c.duration == 0 && c.requests == 0 {
		total = -1 // spinner: no planned end
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(20),
		progressbar.OptionEnableColorCodes(os.Getenv("NO_COLOR") == ""),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionThrottle(100*time.Millisecond),
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
			bar.Describe(describe(elapsed, c, live, sent(), stopped))
			if total > 0 {
				_ = bar.Set64(int64(min(frac, 1) * steps))
			} else {
				_ = bar.Add(1)
			}
			select {
			case <-p.stop:
				_ = bar.Clear()
				return
			case <-tick.C:
			}
		}
	}()
}

// describe is the bar's text, e.g. "12.4s/30s  1234 req  ipv4 0 failed
// ipv6 203 failed (49.1%)", and once sending has stopped "… waiting for 15
// in flight (at most 10s)".
func describe(elapsed time.Duration, c *config, live *report.Live, sent int64, stopped bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.1fs", elapsed.Seconds())
	if c.duration > 0 {
		fmt.Fprintf(&b, "/%s", c.duration)
	}
	done := live.Requests.Load()
	fmt.Fprintf(&b, "  %d req", done)
	if c.requests > 0 {
		fmt.Fprintf(&b, "/%d", c.requests)
	}
	for _, fam := range []probe.Family{probe.IPv4, probe.IPv6} {
		n := live.FamilyRequests[fam].Load()
		if n == 0 {
			continue
		}
		f := live.FamilyFailed[fam].Load()
		s := fmt.Sprintf("  %s %d failed", fam, f)
		if f > 0 {
			s = fmt.Sprintf("  [red]%s %d failed (%.1f%%)[reset]", fam, f, 100*float64(f)/float64(n))
		}
		b.WriteString(s)
	}
	if d := live.Dropped.Load(); d > 0 {
		fmt.Fprintf(&b, "  [yellow]%d dropped[reset]", d)
	}
	if inFlight := sent - done; stopped && inFlight > 0 {
		fmt.Fprintf(&b, "  sending stopped: waiting for %d in flight (at most %s)", inFlight, c.timeout)
	} else if inFlight > 0 {
		fmt.Fprintf(&b, "  %d in flight", inFlight)
	}
	return b.String()
}

// Finish stops and clears the bar, so the report starts on a clean line.
func (p *progressBar) Finish() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.stop)
	<-p.done
}
