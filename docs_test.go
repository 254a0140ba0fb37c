package main

// The README is the way into docs/: every page is linked from it, every
// relative link of the README and of docs/ leads to a file that exists
// (and to a heading that exists, when it names one), and GitHub's Markdown
// engine renders each page with its headings, tables and code blocks
// whole.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	// mdFence opens or closes a fenced code block; pinprobe's pages fence
	// with backticks at the start of the line.
	mdFence = regexp.MustCompile("^(`{3,})")
	// mdCodeSpan is an inline code span, which may run over a line break.
	mdCodeSpan = regexp.MustCompile("(`+)(?s:.+?)(`+)")
	// mdLink is the target of an inline link or image: [text](target).
	mdLink    = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	mdHeading = regexp.MustCompile(`^(#{1,6}) +(.+?) *#*$`)
	// mdTextLink is a link in a heading's text, kept as its text.
	mdTextLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// mdPage is a Markdown page, read: its prose with the code blocks left
// out, its headings' anchors, and how many fences and tables it has.
type mdPage struct {
	prose    string
	anchors  map[string]bool
	headings int
	fences   int
	tables   int
}

func readMarkdown(t *testing.T, path string) mdPage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := mdPage{anchors: map[string]bool{}}
	seen := map[string]int{}
	var prose []string
	fence, prev := "", ""
	for _, l := range strings.Split(string(data), "\n") {
		m := mdFence.FindStringSubmatch(l)
		switch {
		case fence != "":
			if strings.TrimSpace(l) == fence {
				fence = ""
			}
			l = ""
		case m != nil:
			fence, l = m[1], ""
			p.fences++
		case strings.HasPrefix(l, "|") && !strings.HasPrefix(prev, "|"):
			p.tables++
		}
		if h := mdHeading.FindStringSubmatch(l); h != nil {
			p.headings++
			slug := githubSlug(h[2])
			if n := seen[slug]; n > 0 {
				p.anchors[slug+"-"+strconv.Itoa(n)] = true
			} else {
				p.anchors[slug] = true
			}
			seen[slug]++
		}
		prose = append(prose, l)
		prev = l
	}
	if fence != "" {
		t.Errorf("%s: a code block opened with %s is never closed", path, fence)
	}
	p.prose = mdCodeSpan.ReplaceAllString(strings.Join(prose, "\n"), "")
	return p
}

// githubSlug is the anchor GitHub gives a heading: its text in lower case,
// without the Markdown and the punctuation, spaces made hyphens.
func githubSlug(heading string) string {
	text := mdTextLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsSlug: the anchors are GitHub's for the headings these pages have.
func TestDocsSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"One screen (`--brief`)":                     "one-screen---brief",
		"`pinprobe report`: render again, merge":     "pinprobe-report-render-again-merge",
		"Kubernetes: every zone at once":             "kubernetes-every-zone-at-once",
		"HTTP/1.1 and HTTP/2":                        "http11-and-http2",
		"Tracing a failure to the backend: `logs`":   "tracing-a-failure-to-the-backend-logs",
		"Statuses, the headline and the notes":       "statuses-the-headline-and-the-notes",
		"[docs/usage.md](docs/usage.md): every flag": "docsusagemd-every-flag",
	} {
		if got := githubSlug(heading); got != want {
			t.Errorf("githubSlug(%q) = %q; want %q", heading, got, want)
		}
	}
}

// TestDocsLinked: every page of docs/ is linked from the README, and every
// relative link of the README, docs/ and the other pages at the top
// resolves: to a file or directory
// of the repository and, when it names one, to a heading of that page.
func TestDocsLinked(t *testing.T) {
	pages := docPages(t)
	// The other pages at the top (ARCHITECTURE, CHANGELOG, BENCHMARKS)
	// link into docs/ too; their links are checked, not their being linked.
	others, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]mdPage{}
	page := func(path string) mdPage {
		if p, ok := read[path]; ok {
			return p
		}
		read[path] = readMarkdown(t, path)
		return read[path]
	}
	fromReadme := map[string]bool{}
	for _, from := range append(slices.Clone(pages), slices.DeleteFunc(others, func(p string) bool { return p == readme })...) {
		for _, m := range mdLink.FindAllStringSubmatch(page(from).prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := from
			if file != "" {
				path = filepath.Clean(filepath.Join(filepath.Dir(from), file))
			}
			if strings.HasPrefix(path, "..") {
				t.Errorf("%s: link %s leaves the repository", from, target)
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: no such file (%s)", from, target, path)
				continue
			}
			if from == readme {
				fromReadme[path] = true
			}
			if anchor == "" {
				continue
			}
			if filepath.Ext(path) != ".md" {
				t.Errorf("%s: link %s: an anchor into %s, which is not a page", from, target, path)
			} else if !page(path).anchors[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", from, target, path, anchor)
			}
		}
	}
	for _, p := range pages[1:] {
		if !fromReadme[p] {
			t.Errorf("%s is not linked from %s", p, readme)
		}
	}
}

// TestDocsRenderWithCmarkGFM renders the README and every page of docs/
// with cmark-gfm, GitHub's own Markdown engine, when it is installed:
// every heading comes out a heading, every table a table, every fence a
// code block, and no link is left as text.
func TestDocsRenderWithCmarkGFM(t *testing.T) {
	bin, err := exec.LookPath("cmark-gfm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("cmark-gfm is not installed: .ci/run installs it")
		}
		t.Skip("cmark-gfm is not installed (apt-get install cmark-gfm); .ci/run installs it")
	}
	heading := regexp.MustCompile(`<h[1-6][ >]`)
	code := regexp.MustCompile(`(?s)<code[^>]*>.*?</code>`)
	for _, path := range docPages(t) {
		p := readMarkdown(t, path)
		cmd := exec.Command(bin, "--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough", path)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("cmark-gfm %s: %v", path, err)
		}
		html := string(out)
		if got := len(heading.FindAllString(html, -1)); got != p.headings {
			t.Errorf("%s: cmark-gfm made %d headings of %d", path, got, p.headings)
		}
		if got := strings.Count(html, "<table>"); got != p.tables {
			t.Errorf("%s: cmark-gfm made %d tables of %d", path, got, p.tables)
		}
		if got := strings.Count(html, "<pre>"); got != p.fences {
			t.Errorf("%s: cmark-gfm made %d code blocks of %d fences", path, got, p.fences)
		}
		if text := code.ReplaceAllString(html, ""); strings.Contains(text, "](") {
			i := strings.Index(text, "](")
			t.Errorf("%s: a link left as text: …%s…", path, text[max(0, i-60):min(len(text), i+60)])
		}
	}
}
