//go:build !linux

package s3test

import "syscall"

// childAttr: only Linux can tie the child's life to ours; elsewhere Stop
// (from TestMain) is what ends the server.
func childAttr() *syscall.SysProcAttr { return nil }
