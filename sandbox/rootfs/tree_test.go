package rootfs_test

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/sandbox/rootfs"
)

// threeLayers is an image whose layers exercise every rule of applying a
// layer; wantThree is its tree. comp compresses each layer in turn (plain
// for a docker save archive, whose layers are plain tars).
func threeLayers(t testing.TB, comp ...string) []layer {
	l1 := buildLayer(t, comp[0],
		dir("etc"),
		file("etc/passwd", "root:x:0:0"),
		file("etc/group", "g1"),
		file("etc/hostname", "one"),
		dirMode("tmp", 0o1777),
		fileMode("bin/sh", "sh", 0o755), // bin/ is implicit
		hardlink("bin/sh2", "bin/sh"),
		fileMode("usr/bin/sudo", "sudo", 0o4755),
		fileMode("usr/bin/wall", "wall", 0o2755),
		fileMode("sticky-file", "s", 0o1644),
		node("dev/null", tar.TypeChar),
		node("dev/sda", tar.TypeBlock),
		node("run/fifo", tar.TypeFifo),
		hardlink("run/fifo-link", "run/fifo"),
		file("var/file", "lower, hidden by a device"),
		dir("usr/lib"),
		file("usr/lib/libc.so", "libc"),
		symlink("lib", "usr/lib"),
		symlink("etc/mtab", "/proc/mounts"),
		dir("opq"),
		file("opq/a", "lower"),
		file("opq/sub/b", "lower"),
		dir("gone"),
		file("gone/x", "x"),
		file("was-file", "file"),
		dir("was-dir"),
		file("was-dir/y", "y"),
		dir("keep"),
		file("keep/lower", "lower"),
		dirMode("ro", 0o555),
		file("ro/file", "r"),
		dirMode("setgid-dir", 0o2775),
	)
	l2 := buildLayer(t, comp[1],
		file("opq/new", "new"), // before the marker: this layer's, kept
		opaque("opq"),
		file("opq/sub/c", "c"), // after it
		whiteout("gone"),
		whiteout("etc/hostname"),
		file("etc/hostname2", "two"),
		dir("was-file"),
		file("was-dir", "now a file"),
		file("tmp/x", "tmp"),
		node("var/file", tar.TypeChar),
	)
	l3 := buildLayer(t, comp[2],
		file("etc/passwd", "new passwd"),
		whiteout("etc/passwd"), // after this layer's own etc/passwd: only lower ones go
		whiteout("etc/group"),
		file("etc/group", "g3"),
		file("keep/upper", "up"),
		whiteout("keep"), // keep/lower goes, keep/upper stays
		dir(".wh..wh.plnk"),
		file(".wh..wh.plnk/1234.5678", "aufs"),
		file("/abs/path", "slash-prefixed names are ordinary"),
		file("./dot/path", "so are ./ ones"),
		file("a/../b", "and cleaned ones"),
	)
	return []layer{l1, l2, l3}
}

var wantThree = map[string]string{
	".":               "d 0755",
	"abs":             "d 0755",
	"abs/path":        "f 0644 slash-prefixed names are ordinary",
	"b":               "f 0644 and cleaned ones",
	"bin":             "d 0755",
	"bin/sh":          "f 0755 sh",
	"bin/sh2":         "f 0755 sh",
	"dev":             "d 0755",
	"dot":             "d 0755",
	"dot/path":        "f 0644 so are ./ ones",
	"etc":             "d 0755",
	"etc/group":       "f 0644 g3",
	"etc/hostname2":   "f 0644 two",
	"etc/mtab":        "l /proc/mounts",
	"etc/passwd":      "f 0644 new passwd",
	"keep":            "d 0755",
	"keep/upper":      "f 0644 up",
	"lib":             "l usr/lib",
	"opq":             "d 0755",
	"opq/new":         "f 0644 new",
	"opq/sub":         "d 0755",
	"opq/sub/c":       "f 0644 c",
	"ro":              "d 0555",
	"ro/file":         "f 0644 r",
	"run":             "d 0755",
	"setgid-dir":      "d 0775",
	"sticky-file":     "f 0644 s",
	"tmp":             "d 1777",
	"tmp/x":           "f 0644 tmp",
	"usr":             "d 0755",
	"usr/bin":         "d 0755",
	"usr/bin/sudo":    "f 0755 sudo",
	"usr/bin/wall":    "f 0755 wall",
	"usr/lib":         "d 0755",
	"usr/lib/libc.so": "f 0644 libc",
	"var":             "d 0755",
	"was-dir":         "f 0644 now a file",
	"was-file":        "d 0755",
}

func TestThreeLayersOCI(t *testing.T) {
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, ociArchive(t, threeLayers(t, plain, gz, zst)...))
	diffTrees(t, treeOf(t, r.Dir), wantThree)
	checkLinksAndTimes(t, r.Dir)
}

func TestThreeLayersDockerSave(t *testing.T) {
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, dockerArchive(t, threeLayers(t, plain, plain, plain)...))
	diffTrees(t, treeOf(t, r.Dir), wantThree)
	checkLinksAndTimes(t, r.Dir)
	if !strings.HasPrefix(r.Digest, "sha256:") || filepath.Base(filepath.Dir(r.Dir)) != r.Digest[len("sha256:"):] {
		t.Errorf("root %+v: Dir is not <store>/<hex>/rootfs", r)
	}
}

// checkLinksAndTimes checks what treeOf does not show: hard links share
// their file, and files and folders keep their times.
func checkLinksAndTimes(t *testing.T, dir string) {
	t.Helper()
	a, err := os.Stat(filepath.Join(dir, "bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.Stat(filepath.Join(dir, "bin/sh2"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(a, b) {
		t.Error("bin/sh2 is not a hard link of bin/sh")
	}
	for _, p := range []string{"bin/sh", "etc", "tmp", "ro"} {
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(testTime) {
			t.Errorf("%s: modified %v, want %v", p, fi.ModTime(), testTime)
		}
	}
}

// TestOpaqueMarkerFirst: with the marker first in its tar, what follows in
// the folder is kept; lower entries go, deep ones included.
func TestOpaqueMarkerFirst(t *testing.T) {
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, ociArchive(t,
		buildLayer(t, gz, file("d/a", "lower"), file("d/deep/b", "lower"), file("other", "o")),
		buildLayer(t, gz, opaque("d"), file("d/deep/c", "upper"), dir("d")),
	))
	diffTrees(t, treeOf(t, r.Dir), map[string]string{
		".":        "d 0755",
		"d":        "d 0755",
		"d/deep":   "d 0755",
		"d/deep/c": "f 0644 upper",
		"other":    "f 0644 o",
	})
}

func TestSetUIDAndSetGIDDropped(t *testing.T) {
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, ociArchive(t, buildLayer(t, plain,
		fileMode("suid", "x", 0o4755), fileMode("sgid", "x", 0o2711), fileMode("both", "x", 0o6777),
		dirMode("sgid-dir", 0o2755), dirMode("sticky-dir", 0o1777),
	)))
	diffTrees(t, treeOf(t, r.Dir), map[string]string{
		".":          "d 0755",
		"suid":       "f 0755 x",
		"sgid":       "f 0711 x",
		"both":       "f 0777 x",
		"sgid-dir":   "d 0755",
		"sticky-dir": "d 1777",
	})
}

func TestDevicesAndFIFOsDropped(t *testing.T) {
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, ociArchive(t, buildLayer(t, plain,
		dir("dev"), node("dev/null", tar.TypeChar), node("dev/sda", tar.TypeBlock), node("fifo", tar.TypeFifo),
		hardlink("null-link", "dev/null"), file("kept", "k"),
	)))
	diffTrees(t, treeOf(t, r.Dir), map[string]string{
		".":    "d 0755",
		"dev":  "d 0755",
		"kept": "f 0644 k",
	})
}
