//go:build unix

package main

import "syscall"

// descriptorLimit is the process's limit on open files (RLIMIT_NOFILE),
// as it stands: Go raises the soft limit to the hard one at start.
func descriptorLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	return rl.Cur, true
}
