//go:build !linux

package main

import (
	"io"
	"os"
)

// isTerminal reports whether w is a terminal: only then does a command
// draw lines it rewrites in place (skilld run's status line). Without the
// Linux ioctl, a character device is taken for one.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
