// What pinprobe writes for the user is fitted to where it goes: on a
// terminal, lines wrapped to its width, the live view cleared and colours;
// in a pipe or a log, one plain line per message.

package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/pinprobe/pinprobe/internal/render"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// sayer returns the function that writes a line for the user on w,
// "pinprobe: …". On a terminal it first clears the live view and wraps the
// line at word boundaries to the terminal's width; elsewhere (a log, a
// pipe) a message stays on one line, for grep.
func sayer(w io.Writer) func(format string, a ...any) {
	return func(format string, a ...any) {
		msg := "pinprobe: " + fmt.Sprintf(format, a...)
		if f, ok := w.(*os.File); ok && isTerminal(w) {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 20 {
				msg = fitMessage(msg, cols)
			}
		}
		fmt.Fprintln(w, clearLine(w)+msg)
	}
}

// fitMessage wraps msg at word boundaries so that no line, its indent
// included, reaches the last of cols columns (a terminal that is written
// to in its last column wraps early on some emulators).
func fitMessage(msg string, cols int) string {
	const indent = "  "
	return wrap(msg, cols-1-len(indent), indent)
}

// clearLine is what clears the live view (the bar and the rows under it)
// before a message on w: nothing unless w is a terminal.
func clearLine(w io.Writer) string {
	if isTerminal(w) {
		return "\r\x1b[J"
	}
	return ""
}

// renderOptions fits the text report to w: colours and the terminal's
// width on a terminal, 80 columns elsewhere.
func renderOptions(w io.Writer) render.Options {
	o := render.Options{Color: useColor(w), Width: render.DefaultWidth}
	if f, ok := w.(*os.File); ok && isTerminal(w) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			o.Width = cols
		}
	}
	return o
}

// useColor reports whether the text report on w may use ANSI colours.
func useColor(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}
