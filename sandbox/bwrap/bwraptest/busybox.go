package bwraptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BusyboxRoot makes a small root file system for tests: Debian's
// busybox-static with a link for each of its programs in /bin, an /etc
// with a marker file, and nothing of the host. The package is downloaded
// with apt-get once per machine (kept in the user cache folder). Without
// apt-get or a reachable mirror it skips, except under CI=true.
func BusyboxRoot(t testing.TB) string {
	t.Helper()
	deb := busyboxDeb(t)
	root := filepath.Join(t.TempDir(), "busybox-root")
	if out, err := exec.Command("dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(root, "bin", "busybox"), "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet != "busybox" {
			os.Symlink("busybox", filepath.Join(root, "bin", applet))
		}
	}
	for _, d := range []string{"etc", "usr/bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("../../bin/env", filepath.Join(root, "usr", "bin", "env"))
	if err := os.WriteFile(filepath.Join(root, "etc", "skilld-test-root"), []byte("busybox\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func busyboxDeb(t testing.TB) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "skilld-test", "busybox-static")
	if m, _ := filepath.Glob(filepath.Join(dir, "busybox-static_*.deb")); len(m) > 0 {
		return m[0]
	}
	skip := func(why string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(why, args...)
		}
		t.Skipf(why, args...)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		skip("apt-get is not installed: no busybox-static for a test root")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("apt-get", "download", "busybox-static")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		skip("apt-get download busybox-static: %v\n%s", err, out)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "busybox-static_*.deb"))
	if len(m) == 0 {
		skip("apt-get download busybox-static left no package in %s", dir)
	}
	return m[0]
}
