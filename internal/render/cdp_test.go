//go:build unix

package render

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// browser is a headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: commands on its fd 3, answers and events
// on its fd 4, each a JSON message ended by a NUL byte): one process loads
// a page, resizes its window, measures it with a script of the test's
// (DevTools runs it whatever the page's Content-Security-Policy, which
// allows none), reads its DOM and screenshots it, as often as a test asks,
// in a second or two. Everything the page logs is collected: a page without script logs
// nothing, so a line is a blocked fetch, a refused style sheet or a parse
// error.
type browser struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	session string

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpMessage
	events  chan cdpMessage
	logs    []string
	done    chan struct{}
	readErr error
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// cdpTimeout bounds the whole conversation with the browser, every page of
// TestHTMLInChromium: well under a minute even under -race beside other
// suites, which once took more than 60 s when a full-page screenshot was
// decoded at each width.
const cdpTimeout = 3 * time.Minute

// startBrowser starts headless Chromium in its own process group, its
// profile and home in temp dirs, and attaches to a blank page; Cleanup
// closes it and kills the group.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	bin := chromiumPath(t)
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), cdpTimeout)
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--remote-debugging-pipe", "--user-data-dir="+filepath.Join(home, "profile"), "about:blank")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_DATA_HOME="+filepath.Join(home, "data"))
	cmd.ExtraFiles = []*os.File{cmdR, outW} // its fd 3 and fd 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start chromium: %v", err)
	}
	cmdR.Close()
	outW.Close()
	b := &browser{cmd: cmd, in: cmdW, waiting: map[int]chan cdpMessage{}, events: make(chan cdpMessage, 256), done: make(chan struct{})}
	go b.read(outR)
	t.Cleanup(func() {
		b.callBrowser("Browser.close", nil) // best effort; the kill ends it anyway
		cmdW.Close()
		werr := cmd.Wait()
		if kerr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
			t.Errorf("kill chromium's process group: %v", kerr)
		}
		late := ctx.Err() != nil
		cancel()
		outR.Close()
		if late {
			t.Errorf("chromium ran past %v: %v; stderr:\n%s", cdpTimeout, werr, stderr.String())
		}
	})
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.do(t, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.do(t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		b.do(t, b.session, m, nil, nil)
	}
	return b
}

// read dispatches the browser's messages: answers to their callers,
// events to b.events, logs and exceptions to b.logs.
func (b *browser) read(r io.Reader) {
	defer close(b.done)
	br := bufio.NewReader(r)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.readErr = err
			b.mu.Unlock()
			return
		}
		var m cdpMessage
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			continue
		}
		switch m.Method {
		case "":
			b.mu.Lock()
			ch := b.waiting[m.ID]
			delete(b.waiting, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		case "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded":
			b.mu.Lock()
			b.logs = append(b.logs, m.Method+" "+string(m.Params))
			b.mu.Unlock()
		}
		select {
		case b.events <- m:
		default: // nobody waits for it
		}
	}
}

// send writes one command, in the page's session or (session "") to the
// browser, and waits for its answer.
func (b *browser) send(session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg, err := json.Marshal(cdpMessage{ID: id, Method: method, SessionID: session, Params: mustJSON(params)})
	if err != nil {
		return nil, err
	}
	if _, err := b.in.Write(append(msg, 0)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-b.done:
		return nil, fmt.Errorf("%s: the browser closed its pipe: %v", method, b.readErr)
	case <-time.After(cdpTimeout):
		return nil, fmt.Errorf("%s: no answer in %v", method, cdpTimeout)
	}
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

func (b *browser) call(method string, params any) (json.RawMessage, error) {
	return b.send(b.session, method, params)
}

func (b *browser) callBrowser(method string, params any) (json.RawMessage, error) {
	return b.send("", method, params)
}

// do sends a command (see send) and decodes its answer into v, when not
// nil; it fails the test when the browser refuses it.
func (b *browser) do(t *testing.T, session, method string, params, v any) {
	t.Helper()
	res, err := b.send(session, method, params)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if v != nil {
		if err := json.Unmarshal(res, v); err != nil {
			t.Fatalf("chromium: %s: %v", method, err)
		}
	}
}

// load opens page (a file) at width × height CSS pixels and waits for it
// to have loaded.
func (b *browser) load(t *testing.T, page string, width, height int) {
	t.Helper()
	b.resize(t, width, height)
	for len(b.events) > 0 {
		<-b.events // events of earlier pages
	}
	if _, err := b.call("Page.navigate", map[string]any{"url": "file://" + page}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	deadline := time.After(cdpTimeout)
	for {
		select {
		case m := <-b.events:
			if m.Method == "Page.loadEventFired" {
				return
			}
		case <-deadline:
			t.Fatalf("chromium: %s did not load in %v", page, cdpTimeout)
		}
	}
}

// resize sets the window's size in CSS pixels, at one device pixel each.
func (b *browser) resize(t *testing.T, width, height int) {
	t.Helper()
	if _, err := b.call("Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
}

// eval runs expression in the page and decodes its value (which must be
// JSON-able) into v.
func (b *browser) eval(t *testing.T, expression string, v any) {
	t.Helper()
	res, err := b.call("Runtime.evaluate", map[string]any{"expression": expression, "returnByValue": true})
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	var out struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		t.Fatalf("chromium: evaluate: %v", err)
	}
	if out.ExceptionDetails != nil {
		t.Fatalf("chromium: the test's script failed: %s", out.ExceptionDetails)
	}
	if err := json.Unmarshal(out.Result.Value, v); err != nil {
		t.Fatalf("chromium: evaluate: %v (value %s)", err, out.Result.Value)
	}
}

// screenshot takes the whole page, as long as it is, as PNG.
func (b *browser) screenshot(t *testing.T) []byte {
	t.Helper()
	res, err := b.call("Page.getLayoutMetrics", nil)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	var m struct {
		Content struct{ Width, Height float64 } `json:"cssContentSize"`
	}
	if err := json.Unmarshal(res, &m); err != nil {
		t.Fatalf("chromium: layout metrics: %v", err)
	}
	return b.capturePNG(t, map[string]any{"x": 0, "y": 0, "width": m.Content.Width, "height": m.Content.Height, "scale": 1})
}

// capture takes the part clip of the page (CSS pixels, from its top left
// corner, scrolled or not) and decodes it: the image's bounds are clip, so
// its pixels have their coordinates in the page.
func (b *browser) capture(t *testing.T, clip image.Rectangle) *image.RGBA {
	t.Helper()
	shot := b.capturePNG(t, map[string]any{"x": clip.Min.X, "y": clip.Min.Y, "width": clip.Dx(), "height": clip.Dy(), "scale": 1})
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("decode the screenshot: %v", err)
	}
	if img.Bounds().Size() != clip.Size() {
		t.Fatalf("the screenshot of %v is %v", clip, img.Bounds())
	}
	rgba, ok := img.(*image.RGBA)
	if !ok {
		rgba = image.NewRGBA(img.Bounds())
		draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	}
	rgba.Rect = clip
	return rgba
}

// capturePNG takes the part clip of the page as PNG.
func (b *browser) capturePNG(t *testing.T, clip map[string]any) []byte {
	t.Helper()
	res, err := b.call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true, "clip": clip})
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(res, &shot); err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	return png
}

// pageLogs returns what the pages logged so far, and forgets it.
func (b *browser) pageLogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.logs
	b.logs = nil
	return out
}

// logLine shortens a logged message for an error.
func logLine(s string) string {
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ")
}
