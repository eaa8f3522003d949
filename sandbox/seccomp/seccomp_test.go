package seccomp

import (
	"encoding/binary"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// data lays out a struct seccomp_data the way the program reads it: the
// x/net/bpf machine loads 32-bit words big-endian, so each word is written
// big-endian at the offset the kernel would have it (an argument's low
// word first, as on a little-endian machine).
func data(nr, arch uint32, arg0 uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	binary.BigEndian.PutUint32(b[offArg0:], uint32(arg0))
	binary.BigEndian.PutUint32(b[offArg0+4:], uint32(arg0>>32))
	return b
}

func verdict(t *testing.T, vm *bpf.VM, nr, arch uint32, arg0 uint64) uint32 {
	t.Helper()
	v, err := vm.Run(data(nr, arch, arg0))
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

func TestFilter(t *testing.T) {
	ins, err := Instructions()
	if err != nil {
		t.Skip(err)
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	native, _ := nativeArch()
	eperm := uint32(unix.SECCOMP_RET_ERRNO | uint32(syscall.EPERM))
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	for _, r := range Rules() {
		if len(r.Calls) != len(r.Numbers) {
			t.Fatalf("rule %v: %d names, %d numbers", r.Calls, len(r.Calls), len(r.Numbers))
		}
		want := eperm
		if r.Errno != 0 {
			want = unix.SECCOMP_RET_ERRNO | uint32(r.Errno)
		}
		for i, n := range r.Numbers {
			if r.FlagBits != 0 {
				if got := verdict(t, vm, n, native, uint64(r.FlagBits)|uint64(syscall.SIGCHLD)); got != want {
					t.Errorf("%s with flags %#x: %#x, want %#x", r.Calls[i], r.FlagBits, got, want)
				}
				if got := verdict(t, vm, n, native, uint64(syscall.SIGCHLD)|unix.CLONE_NEWNS|1<<40); got != allow {
					t.Errorf("%s without the flags: %#x, want allowed", r.Calls[i], got)
				}
				continue
			}
			if got := verdict(t, vm, n, native, 0); got != want {
				t.Errorf("%s (%d): %#x, want %#x", r.Calls[i], n, got, want)
			}
		}
	}
	for _, n := range []uint32{unix.SYS_READ, unix.SYS_WRITE, unix.SYS_OPENAT, unix.SYS_EXECVE, unix.SYS_MMAP, unix.SYS_FUTEX, unix.SYS_WAIT4} {
		if got := verdict(t, vm, n, native, 0); got != allow {
			t.Errorf("system call %d: %#x, want allowed", n, got)
		}
	}
	// Another architecture's entry (i386 on x86-64) is refused whatever
	// the call.
	if got := verdict(t, vm, 20, unix.AUDIT_ARCH_I386, 0); got != eperm {
		t.Errorf("an i386 call: %#x", got)
	}
	if runtime.GOARCH == "amd64" {
		if got := verdict(t, vm, x32Bit|unix.SYS_READ, native, 0); got != eperm {
			t.Errorf("an x32 call: %#x", got)
		}
	}
	prog, err := Program()
	if err != nil || len(prog) != 8*len(ins) {
		t.Fatalf("Program: %d bytes for %d instructions, %v", len(prog), len(ins), err)
	}
	if len(Denied()) < 40 {
		t.Errorf("Denied: %q", Denied())
	}
}

// TestDocumented: docs/SANDBOX.md names every denied call.
func TestDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/SANDBOX.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Denied() {
		if !strings.Contains(string(doc), "`"+c+"`") {
			t.Errorf("docs/SANDBOX.md does not name %s", c)
		}
	}
}
