package bwrap_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// TestEtcIsTheChosenEntries: on the host's root, /etc holds exactly the
// chosen entries the host has, each with the host's bytes, and the
// sandbox's own passwd and group; none of it can be written.
func TestEtcIsTheChosenEntries(t *testing.T) {
	p, _ := bwraptest.New(t)
	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "etc"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Destroy(t.Context())
	res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: "ls -A /etc; echo ---; cat /etc/hosts; echo ---; cat /etc/passwd; echo ---; touch /etc/x /etc/hosts 2>/dev/null || echo read-only"})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(res.Summary(), err)
	}
	parts := strings.Split(string(res.Output), "---\n")
	if len(parts) != 4 {
		t.Fatalf("%q", res.Output)
	}
	var want []string
	for _, e := range bwrap.EtcEntries() {
		if _, err := os.Stat("/etc/" + e); err == nil {
			want = append(want, e)
		}
	}
	want = append(want, "group", "passwd")
	slices.Sort(want)
	got := strings.Fields(parts[0])
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("/etc holds %q, want %q", got, want)
	}
	if hosts, _ := os.ReadFile("/etc/hosts"); parts[1] != string(hosts) {
		t.Errorf("/etc/hosts: %q, the host's %q", parts[1], hosts)
	}
	if !strings.HasPrefix(parts[2], "root:x:0:0:") || !strings.Contains(parts[2], "sandbox:x:1000:1000:") || strings.Count(parts[2], "\n") != 3 {
		t.Errorf("/etc/passwd: %q", parts[2])
	}
	if parts[3] != "read-only\n" {
		t.Errorf("writing /etc: %q", parts[3])
	}
}

// TestEtcFollowsItsSources: a change to a file of the root's /etc shows in
// the next command while a command already running keeps what it
// started with; a file replaced by a link is shown as that link, resolved
// inside the sandbox, never read on the host.
func TestEtcFollowsItsSources(t *testing.T) {
	bwraptest.Require(t)
	root := bwraptest.BusyboxRoot(t)
	busybox, err := bwrap.DirRoot("busybox", root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := bwrap.New(t.Context(), bwrap.Config{Root: filepath.Join(dir, "sb"), CacheDir: filepath.Join(dir, "cache"), Roots: []bwrap.Root{busybox}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "follow"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Destroy(t.Context())
	cat := func(command string) string {
		t.Helper()
		res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: command})
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Output)
	}
	if got := cat("cat /etc/skilld-test-root"); got != "busybox\n" {
		t.Fatalf("before: %q", got)
	}
	// A command that reads /etc once the file has changed on the host:
	// it says it runs (and so has its /etc), then waits for "go".
	var wg sync.WaitGroup
	var during string
	wg.Go(func() {
		during = cat("touch started; while [ ! -e go ]; do sleep 0.05; done; cat /etc/skilld-test-root")
	})
	for {
		if _, err := sb.Stat(t.Context(), "started"); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	src := filepath.Join(root, "etc", "skilld-test-root")
	if err := os.WriteFile(src+".new", []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(src+".new", src); err != nil {
		t.Fatal(err)
	}
	if got := cat("cat /etc/skilld-test-root"); got != "changed\n" {
		t.Errorf("after the change: %q", got)
	}
	if err := sb.WriteFile(t.Context(), "go", nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if during != "busybox\n" {
		t.Errorf("the command running across the change read %q", during)
	}
	// A secret of the host's, and the root's file made a link to it.
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(src)
	if err := os.Symlink(secret, src); err != nil {
		t.Fatal(err)
	}
	if got := cat("readlink /etc/skilld-test-root; cat /etc/skilld-test-root 2>&1 || echo unreadable"); got != secret+"\n"+"cat: can't open '/etc/skilld-test-root': No such file or directory\nunreadable\n" {
		t.Errorf("a link to the host's file: %q", got)
	}
}
