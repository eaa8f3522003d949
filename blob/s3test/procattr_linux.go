package s3test

import "syscall"

// childAttr makes the kernel kill the server when the test binary dies, so a
// test killed by a timeout does not leave a server running.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
