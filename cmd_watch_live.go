package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinprobe/pinprobe/internal/render"
	"github.com/pinprobe/pinprobe/internal/report"
	"github.com/pinprobe/pinprobe/internal/session"
	"github.com/pinprobe/pinprobe/internal/watch"
)

// The live page's defaults: a window long enough to judge an address at
// the watch's default rate (300 requests of each of four addresses), a
// day of them kept.
const (
	watchWindow = 5 * time.Minute
	watchKeep   = 288
)

// watchMux serves the metrics at /metrics, the live page at / and the
// suspects since the start at /suspects.
func watchMux(p *livePage) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", p.w.Handler())
	mux.Handle("GET /{$}", p)
	mux.Handle("GET /suspects", p.w.SuspectsHandler())
	return mux
}

// livePage is GET /: the window in progress (?window=last: the last that
// ended) as HTML, ?format=markdown, text or json.
type livePage struct {
	w       *watch.Watch
	vantage string
	// win is the watch's windows, once its targets resolved.
	win atomic.Pointer[session.Windows]
}

func (p *livePage) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	win := p.win.Load()
	if win == nil {
		http.Error(rw, "pinprobe watch: no address of any target yet; the page shows the first window once one resolves", http.StatusServiceUnavailable)
		return
	}
	q := req.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "html"
	}
	var doc []byte
	switch q.Get("window") {
	case "":
		if doc = win.Current(); doc == nil {
			http.Error(rw, "pinprobe watch: starting; the first window opens with the first request", http.StatusServiceUnavailable)
			return
		}
	case "last":
		if doc = win.Last(); doc == nil {
			http.Error(rw, "no window has ended yet: / shows the window in progress", http.StatusNotFound)
			return
		}
	default:
		http.Error(rw, fmt.Sprintf("window=%.40q: want last, or none for the window in progress", q.Get("window")), http.StatusBadRequest)
		return
	}
	if format == "json" {
		rw.Header().Set("Content-Type", "application/json")
		rw.Write(doc)
		return
	}
	write, err := render.LiveForFormat(format, render.Options{Width: 100})
	if err != nil {
		http.Error(rw, "format="+err.Error(), http.StatusBadRequest)
		return
	}
	rep, err := report.Parse(doc, "the window")
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := write(&buf, rep, p.live(win, q.Get("window") == "last")); err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	rw.Header().Set("Content-Type", map[string]string{"html": "text/html", "markdown": "text/markdown", "text": "text/plain"}[format]+"; charset=utf-8")
	rw.Write(buf.Bytes())
}

// live is what the page says of the watch beside its window's report.
func (p *livePage) live(win *session.Windows, ended bool) *render.Live {
	l := &render.Live{Since: win.Since(), Window: win.Every(), Ended: ended, Vantage: p.vantage, Now: time.Now(),
		Refresh: int(min(win.Every(), 30*time.Second).Seconds())}
	for _, s := range p.w.Suspects() {
		l.Suspects = append(l.Suspects, render.LiveSuspect{What: s.What, Since: s.Start.At, Detected: s.Start.DetectedAt,
			Ended: s.Ended, Retired: s.Retired, Failures: s.Start.Failures, Requests: s.Start.Requests, IDs: s.Start.IDs})
	}
	return l
}

// keptWindows writes each window's report into dir, keeping the newest
// keep of them, on a goroutine of its own: a slow disk never holds the
// watch up. A write that fails is said on stderr when its error is new,
// and the watch goes on.
type keptWindows struct {
	dir  string
	keep int
	say  func(string, ...any)

	queue chan *report.Report // the window waiting for the one being written
	done  chan struct{}

	mu      sync.Mutex
	lastErr string
}

// keptWait is how long a watch that stops waits for its last windows'
// reports to be written.
const keptWait = 10 * time.Second

// newKeptWindows starts the writer of -o dir.
func newKeptWindows(dir string, keep int, say func(string, ...any)) *keptWindows {
	k := &keptWindows{dir: dir, keep: keep, say: say, queue: make(chan *report.Report, 1), done: make(chan struct{})}
	go func() {
		defer close(k.done)
		for r := range k.queue {
			k.save(r)
		}
	}()
	return k
}

// add hands r to the writer; when it is still busy with two windows (a
// hung disk), r is not kept, and that is said.
func (k *keptWindows) add(r *report.Report) {
	select {
	case k.queue <- r:
	default:
		k.say("watch: -o %s: the disk is still writing the windows before: the window from %s UTC is not kept", k.dir, r.StartedAt.UTC().Format("15:04:05"))
	}
}

// close waits, at most keptWait, for the windows handed over to be
// written.
func (k *keptWindows) close() {
	close(k.queue)
	select {
	case <-k.done:
	case <-time.After(keptWait):
		k.say("watch: -o %s: the last windows' reports are not written after %s: stopping without them", k.dir, keptWait)
	}
}

// windowPrefix begins the name of every report -o keeps, and only theirs:
// pruning removes no other file.
const windowPrefix = "pinprobe-watch-"

// checkWindowDir makes dir when it is missing and checks that a file can be
// written in it.
func checkWindowDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".pinprobe-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// save writes r as its window's file, then prunes the oldest.
func (k *keptWindows) save(r *report.Report) {
	err := k.write(r)
	if err == nil {
		err = k.prune()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // "no space left on device", not the temporary file's name
	}
	switch {
	case err != nil && err.Error() != k.lastErr:
		k.say("watch: -o %s: %s; the watch goes on, and says when it writes again", k.dir, err)
		k.lastErr = err.Error()
	case err == nil && k.lastErr != "":
		k.say("watch: -o %s: writing the windows' reports again", k.dir)
		k.lastErr = ""
	}
}

// write writes r whole or not at all: a temporary file renamed.
func (k *keptWindows) write(r *report.Report) error {
	name := windowPrefix + r.StartedAt.UTC().Format("20060102T150405Z") + "-" + r.RunID + ".json"
	tmp, err := os.CreateTemp(k.dir, ".pinprobe-window-*")
	if err != nil {
		return err
	}
	err = report.JSON(tmp, r)
	if err == nil {
		err = tmp.Chmod(0o644) // as every report pinprobe writes
	}
	if err == nil {
		err = tmp.Sync() // on disk before its name is: whole after a power loss too
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(k.dir, name))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// prune removes the oldest windows' files past keep: their names sort by
// their window's start.
func (k *keptWindows) prune() error {
	entries, err := os.ReadDir(k.dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, windowPrefix) && strings.HasSuffix(n, ".json") && e.Type().IsRegular() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var errs []error
	for _, n := range names[:max(len(names)-k.keep, 0)] {
		errs = append(errs, os.Remove(filepath.Join(k.dir, n)))
	}
	return errors.Join(errs...)
}
