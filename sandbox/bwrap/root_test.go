package bwrap_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// TestRootfs: a sandbox on a root file system sees that root, not the
// host's /usr, with the sandbox's own /etc/passwd and its workspace and
// skills as on the host's root; an agent may pick any configured root by
// name and no other.
func TestRootfs(t *testing.T) {
	bwraptest.Require(t)
	busybox, err := bwrap.DirRoot("busybox", bwraptest.BusyboxRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := bwrap.New(t.Context(), bwrap.Config{Root: filepath.Join(dir, "sb"), CacheDir: filepath.Join(dir, "cache"), Roots: []bwrap.Root{busybox, bwrap.HostRoot()}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if info := p.Info(); info.Rootfs == nil || info.Rootfs.Name != "busybox" || !strings.HasPrefix(info.Rootfs.Digest, "tree-sha256:") {
		t.Errorf("the provider's default root: %+v", info.Rootfs)
	}
	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "bb"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Destroy(t.Context())
	if err := sb.WriteFile(t.Context(), "note.txt", []byte("from the tool\n")); err != nil {
		t.Fatal(err)
	}
	res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: "cat /etc/skilld-test-root note.txt; test -e /usr/bin/gcc || echo no-host-usr; grep -c : /etc/passwd; id -u; echo x > /tmp/t && echo tmp-ok"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Output); got != "busybox\nfrom the tool\nno-host-usr\n3\n1000\ntmp-ok\n" {
		t.Errorf("on the busybox root: %q (%s)", got, res.Summary())
	}
	if d, ok := sb.(sandbox.Described); !ok || d.Info().Rootfs.Name != "busybox" {
		t.Errorf("the sandbox's root: %+v", d.Info().Rootfs)
	}
	host, err := p.Create(t.Context(), sandbox.CreateParams{ID: "host", Rootfs: "host"})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Destroy(t.Context())
	if res, _ := host.Exec(t.Context(), sandbox.ExecParams{Command: "test -e /etc/skilld-test-root || echo host"}); string(res.Output) != "host\n" {
		t.Errorf("on the host root: %q", res.Output)
	}
	_, err = p.Create(t.Context(), sandbox.CreateParams{ID: "other", Rootfs: "ubuntu"})
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "busybox, host") {
		t.Errorf("an unknown root: %v", err)
	}
	if _, err := bwrap.New(t.Context(), bwrap.Config{Root: filepath.Join(dir, "sb2"), CacheDir: filepath.Join(dir, "cache"), Roots: []bwrap.Root{{Name: "empty", Dir: t.TempDir(), Digest: "x"}}}); skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), "/bin/sh") {
		t.Errorf("a root without a shell: %v", err)
	}
}

// TestSkillImportsItsOwnModules: a skill's script importing its own
// package (from scripts.helpers import …) runs from anywhere in the
// workspace, as the public skills' scripts expect; the agent's own
// PYTHONPATH comes first.
func TestSkillImportsItsOwnModules(t *testing.T) {
	p, _ := bwraptest.New(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	pkg, err := pack.New([]pack.File{
		{Path: "SKILL.md", Data: []byte("---\nname: office\ndescription: d\n---\nRun scripts/tool.py.\n")},
		{Path: "scripts/__init__.py", Data: nil},
		{Path: "scripts/helpers/__init__.py", Data: []byte("VALUE = 'own module'\n")},
		{Path: "scripts/tool.py", Data: []byte("from scripts.helpers import VALUE\nimport sys\nprint(VALUE, sys.path[1])\n")},
	}, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "imports", Env: []string{"PYTHONPATH=/workspace/mine"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Destroy(t.Context())
	if err := sb.Place(t.Context(), "skills/office-12345678", pkg); err != nil {
		t.Fatal(err)
	}
	res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: "mkdir -p deep/er && cd deep/er && python3 ../../skills/office-12345678/scripts/tool.py; echo $PYTHONPATH"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Output); got != "own module /workspace/mine\n/workspace/mine:/workspace/skills/office-12345678\n" {
		t.Errorf("%q", got)
	}
}
