// Package seccomp builds the system-call filter every sandboxed command
// runs under. It is a deny list over the kernel surfaces a skill script
// never needs and that have carried privilege escalations or cross-tenant
// channels: kernel keyrings, io_uring, perf events, BPF, userfaultfd,
// tracing other processes, mounts, new user namespaces, module loading and
// machine administration, file handles, and the other architectures'
// system-call entries. Denied calls fail with EPERM (clone3 with ENOSYS),
// so a program that probes for a feature learns it is missing and goes on;
// nothing is killed.
//
// The program is classic BPF in the kernel's struct sock_filter layout, as
// bubblewrap's --seccomp takes it; it is built in Go from golang.org/x/net/bpf
// and the system-call numbers of golang.org/x/sys/unix for the architecture
// the server was built for.
package seccomp

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"syscall"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Rule denies a set of system calls, for one reason.
type Rule struct {
	// Calls are the system calls' names, as the kernel spells them.
	Calls []string
	// Numbers are their numbers on this architecture, in Calls' order.
	Numbers []uint32
	// FlagBits, when not zero, denies a call only when its first argument
	// (clone's and unshare's flags) has one of these bits set.
	FlagBits uint32
	// Errno is what the call returns: EPERM unless said otherwise.
	Errno syscall.Errno
	// Why says what the calls would give a command.
	Why string
}

// Rules are the filter's entries, in the order the program checks them.
func Rules() []Rule {
	return []Rule{
		{Calls: []string{"add_key", "keyctl", "request_key"}, Numbers: []uint32{unix.SYS_ADD_KEY, unix.SYS_KEYCTL, unix.SYS_REQUEST_KEY},
			Why: "kernel keyrings belong to a uid, not to a sandbox, and outlive the command: a channel between tasks and a quota they share"},
		{Calls: []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}, Numbers: []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER},
			Why: "a large kernel interface behind many recent privilege escalations; ordinary I/O does not need it"},
		{Calls: []string{"perf_event_open"}, Numbers: []uint32{unix.SYS_PERF_EVENT_OPEN},
			Why: "kernel and hardware counters: a side channel and a frequent source of kernel bugs"},
		{Calls: []string{"bpf"}, Numbers: []uint32{unix.SYS_BPF},
			Why: "loads programs into the kernel"},
		{Calls: []string{"userfaultfd"}, Numbers: []uint32{unix.SYS_USERFAULTFD},
			Why: "lets a process pause the kernel at chosen points, the usual aid to exploiting races"},
		{Calls: []string{"ptrace", "process_vm_readv", "process_vm_writev"}, Numbers: []uint32{unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV},
			Why: "read and change other processes' memory; a traced process also escapes this filter on kernels before 4.8 (so gdb and strace do not work inside)"},
		{Calls: []string{"mount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "open_tree_attr", "mount_setattr"},
			Numbers: []uint32{unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_MOUNT_SETATTR},
			Why:     "the sandbox's mounts are fixed before the command starts; changing or cloning them is never the command's business"},
		{Calls: []string{"unshare", "clone"}, Numbers: []uint32{unix.SYS_UNSHARE, unix.SYS_CLONE}, FlagBits: unix.CLONE_NEWUSER,
			Why: "a new user namespace gives its creator every capability inside it, and with them kernel paths that are otherwise closed"},
		{Calls: []string{"clone3"}, Numbers: []uint32{unix.SYS_CLONE3}, Errno: unix.ENOSYS,
			Why: "its flags are in memory a filter cannot read; ENOSYS makes the C library fall back to clone, whose flags are checked"},
		{Calls: []string{"setns"}, Numbers: []uint32{unix.SYS_SETNS},
			Why: "joining another namespace"},
		{Calls: []string{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog"},
			Numbers: []uint32{unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD, unix.SYS_SYSLOG},
			Why:     "administration of the machine: kernels, modules, swap, accounting, quotas and the kernel log"},
		{Calls: []string{"name_to_handle_at", "open_by_handle_at"}, Numbers: []uint32{unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT},
			Why: "open files by handle, around the mount namespace (the 'shocker' container escape)"},
	}
}

// nativeArch is the audit architecture of the system calls this program
// lets through; every other one (i386's int 0x80 on x86-64, arm's on
// arm64) is refused.
func nativeArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	case "riscv64":
		return unix.AUDIT_ARCH_RISCV64, true
	case "ppc64le":
		return unix.AUDIT_ARCH_PPC64LE, true
	case "s390x":
		return unix.AUDIT_ARCH_S390X, true
	}
	return 0, false
}

// x32Bit marks x32 system calls on x86-64: the same audit architecture,
// another table.
const x32Bit = 0x40000000

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // the low 32 bits on a little-endian machine
)

func errno(e syscall.Errno) bpf.Instruction {
	return bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(e)}
}

// Instructions assembles the rules for this machine's architecture.
func Instructions() ([]bpf.Instruction, error) {
	native, ok := nativeArch()
	if !ok {
		return nil, fmt.Errorf("seccomp: no filter for %s", runtime.GOARCH)
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return nil, fmt.Errorf("seccomp: the argument checks assume a little-endian machine, not %s", runtime.GOARCH)
	}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: native, SkipTrue: 1},
		errno(unix.EPERM),
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	if runtime.GOARCH == "amd64" {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipFalse: 1}, errno(unix.EPERM))
	}
	// Each call: "if nr == N, return the rule's errno" (or, for a rule on
	// flags, load the flags and test them, then reload nr).
	for _, r := range Rules() {
		e := r.Errno
		if e == 0 {
			e = unix.EPERM
		}
		for _, n := range r.Numbers {
			if r.FlagBits == 0 {
				prog = append(prog, bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: n, SkipTrue: 1}, errno(e))
				continue
			}
			prog = append(prog,
				bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: n, SkipTrue: 4},
				bpf.LoadAbsolute{Off: offArg0, Size: 4},
				bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: r.FlagBits, SkipFalse: 1},
				errno(e),
				bpf.LoadAbsolute{Off: offNr, Size: 4},
			)
		}
	}
	return append(prog, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}), nil
}

// Program is Instructions in the kernel's struct sock_filter layout (code,
// jt, jf, k in the machine's byte order), as bubblewrap reads it from
// --seccomp FD.
func Program() ([]byte, error) {
	ins, err := Instructions()
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(ins)
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.NativeEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.NativeEndian.AppendUint32(out, r.K)
	}
	return out, nil
}

// Denied lists every denied call's name, sorted, for docs and logs.
func Denied() []string {
	var out []string
	for _, r := range Rules() {
		out = append(out, r.Calls...)
	}
	slices.Sort(out)
	return out
}
