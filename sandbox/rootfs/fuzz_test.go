package rootfs_test

import (
	"bytes"
	"context"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox/rootfs"
)

var update = flag.Bool("update", false, "rewrite the generated fuzz seeds in testdata/fuzz")

// fuzzLimits keep each iteration cheap and still let the seeds through.
var fuzzLimits = rootfs.Limits{MaxBytes: 1 << 20, MaxFiles: 256, MaxLayers: 8}

// fuzzSeeds are the archives FuzzUnpack starts from, by name: valid ones
// of each layout and hostile ones aimed at <base>/outside (the fuzz
// harness lays folders out as env does).
func fuzzSeeds(tb testing.TB) map[string][]byte {
	o := newOCI()
	idx := o.index(tb, o.image(tb, otherArch(), buildLayer(tb, gz, file("arch", otherArch()))), o.image(tb, goarch, buildLayer(tb, plain, file("arch", goarch))))
	return map[string][]byte{
		"valid-oci": ociArchive(tb,
			buildLayer(tb, gz, dir("etc"), file("etc/passwd", "root"), symlink("lib", "usr/lib"), file("usr/lib/x", "x"),
				hardlink("usr/lib/y", "usr/lib/x"), dir("d"), file("d/lower", "l"), fileMode("suid", "s", 0o4755)),
			buildLayer(tb, zst, opaque("d"), file("d/upper", "u"), whiteout("etc/passwd")),
		),
		"valid-docker":   dockerArchive(tb, buildLayer(tb, plain, file("a", "1")), buildLayer(tb, plain, whiteout("a"), file("b", "2"))),
		"platform-index": o.archive(tb, idx),
		"symlink-escape": ociArchive(tb, buildLayer(tb, plain, symlink("evil", outRel), file("evil/pwned", "x"))),
		"hardlink-out":   ociArchive(tb, buildLayer(tb, plain, symlink("evil", outRel), hardlink("x", "evil/secret"))),
		"tar-slip":       ociArchive(tb, buildLayer(tb, plain, file("../../../outside/pwned", "x"))),
	}
}

// seedFile is a seed in the format of go test's fuzz corpus.
func seedFile(b []byte) []byte {
	return []byte("go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n")
}

// seedArch is the architecture the committed seeds were written on: their
// images are of that architecture (FuzzUnpack also adds seeds built for
// the machine it runs on).
const seedArch = "amd64"

// TestFuzzSeeds keeps testdata/fuzz/FuzzUnpack/seed-* in step with the
// builder (go test ./sandbox/rootfs -run TestFuzzSeeds -update rewrites
// them, on an amd64 machine). Other files there are inputs go test -fuzz
// found, kept as seeds.
func TestFuzzSeeds(t *testing.T) {
	if goarch != seedArch {
		t.Skipf("the seeds are %s images; this machine is %s", seedArch, goarch)
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzUnpack")
	for name, b := range fuzzSeeds(t) {
		p := filepath.Join(dir, "seed-"+name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, seedFile(b), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, seedFile(b)) {
			t.Errorf("%s differs from its generator (%v); run go test ./sandbox/rootfs -run TestFuzzSeeds -update", p, err)
		}
	}
}

// FuzzUnpack: whatever the archive, Unpack does not panic, returns a
// typed error or a tree holding no whiteout, device, FIFO or set-uid file,
// writes nothing outside the store, and leaves no temporary folder.
func FuzzUnpack(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		base := t.TempDir()
		store, outside, archive := filepath.Join(base, "store"), filepath.Join(base, "outside"), filepath.Join(base, "in.tar")
		if err := os.Mkdir(outside, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(archive, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := rootfs.Open(store, fuzzLimits)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Unpack(context.Background(), archive)
		if err != nil {
			if c := skilld.ErrorCode(err); c != skilld.EINVALID && c != skilld.ETOOLARGE {
				t.Fatalf("error of code %q: %v", c, err)
			}
		}

		want := map[string]string{".": "d 0755", "secret": "f 0644 secret"}
		if got := treeOf(t, outside); len(got) != len(want) || got["secret"] != want["secret"] {
			t.Fatalf("the folder outside the store changed: %v", got)
		}
		if names := entriesOf(t, base); !slices.Equal(names, []string{"in.tar", "outside", "store"}) {
			t.Fatalf("next to the store: %v", names)
		}
		names := entriesOf(t, store)
		if err != nil {
			if len(names) != 0 {
				t.Fatalf("a refused unpack left %v", names)
			}
			return
		}
		if len(names) != 1 || "sha256:"+names[0] != r.Digest {
			t.Fatalf("store holds %v for %s", names, r.Digest)
		}
		filepath.WalkDir(r.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			fi, err := d.Info()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case strings.HasPrefix(d.Name(), ".wh."):
				t.Errorf("whiteout in the tree: %s", p)
			case fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0:
				t.Errorf("special file in the tree: %s (%v)", p, fi.Mode())
			case fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0:
				t.Errorf("set-uid or set-gid in the tree: %s (%v)", p, fi.Mode())
			}
			return nil
		})
	})
}
