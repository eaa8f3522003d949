package bwrap

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/skilld/skilld/sandbox"
)

// BenchmarkExecTrue is `true` in a sandbox with every limit in force
// ("sandbox"), beside its floor, "bare": `bwrap --unshare-all` with the
// host's system folders (/usr and the links to it) running `true`,
// started from Go as the user the sandbox's commands run as, with none of
// the sandbox's other mounts, limits or cgroups. "bwrap" sits between:
// bwrap with the sandbox's own arguments and descriptors, started from Go
// the same way, without the cgroups and resource limits: what the
// sandbox's configuration costs by itself.
func BenchmarkExecTrue(b *testing.B) {
	p := newProvider(b)
	sbox, err := p.Create(b.Context(), sandbox.CreateParams{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer sbox.Destroy(b.Context())
	s := sbox.(*sb)
	uid := uint32(os.Geteuid())
	if s.uid != 0 {
		uid = uint32(s.uid)
	}
	cred := &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}
	b.Run("sandbox", func(b *testing.B) {
		for b.Loop() {
			res, err := s.Exec(b.Context(), sandbox.ExecParams{Command: "true"})
			if err != nil || res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("bwrap", func(b *testing.B) {
		for b.Loop() {
			statusR, statusW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			fds := &descriptors{}
			fds.add(statusW)
			etc, release, err := s.root.etc.acquire()
			if err != nil {
				b.Fatal(err)
			}
			argv, err := s.argv("true", fds, etc, nil, s.limits, false, nil)
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env, cmd.Dir, cmd.ExtraFiles = []string{"PATH=/usr/bin:/bin"}, "/", fds.files
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			out, err := cmd.CombinedOutput()
			fds.close()
			release()
			statusR.Close()
			if err != nil {
				b.Fatal(err, string(out))
			}
		}
	})
	// The system folders alone: a bind of the whole root would bind every
	// mount of the machine, which other processes add and remove.
	bare := []string{"--unshare-all"}
	for _, d := range systemDirs {
		if info, err := os.Lstat(d); err == nil && info.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(d)
			bare = append(bare, "--symlink", target, d)
		} else if err == nil {
			bare = append(bare, "--ro-bind", d, d)
		}
	}
	bare = append(bare, "true")
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(p.bwrap, bare...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatal(err, string(out))
			}
		}
	})
}
