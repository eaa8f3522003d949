// Package testnet holds network addresses for tests.
package testnet

import (
	"fmt"
	"syscall"
	"testing"
)

// RefusingAddr is a loopback address ("127.0.0.1:port") whose port is
// held by a socket that never listens, until t ends: a connection to it is
// refused, and no listener of a test running beside t can take the port,
// as it could after a listener is closed.
func RefusingAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
