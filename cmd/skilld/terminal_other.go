//go:build !linux

package main

import "os"

// isTerminal reports whether f is a terminal: only then does a command
// draw lines it rewrites in place (skilld run's status line), or ask a
// question. Without the Linux ioctl, a character device is taken for one.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
