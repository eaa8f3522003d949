package bwrap_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/sandbox/skillcache"
)

// BenchmarkExec is one `true` under bubblewrap with every limit in force:
// what a shell tool call costs beyond the command itself. "host-sh" is the
// floor: `sh -c true` started from Go with no isolation at all.
func BenchmarkExec(b *testing.B) {
	p, _ := bwraptest.New(b)
	sb, err := p.Create(b.Context(), sandbox.CreateParams{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Destroy(b.Context())
	b.Run("bwrap", func(b *testing.B) {
		for b.Loop() {
			res, err := sb.Exec(b.Context(), sandbox.ExecParams{Command: "true"})
			if err != nil || res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("host-sh", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("sh", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCreate makes a sandbox and removes it again: what a task pays
// once, not per command. "volume" is a root server's default (a uid
// claimed, a 2 GiB ext4 image made and mounted, the hub's bind), "folder"
// the same without a size (a nosuid bind of a folder); the floor,
// "mkdir", makes and removes the folders alone.
func BenchmarkCreate(b *testing.B) {
	for _, c := range []struct {
		name string
		disk int64
	}{{"volume", 0}, {"folder", -1}} {
		b.Run(c.name, func(b *testing.B) {
			bwraptest.Require(b)
			dir := b.TempDir()
			p, err := bwrap.New(b.Context(), bwrap.Config{Root: filepath.Join(dir, "sb"), CacheDir: filepath.Join(dir, "cache"), Disk: c.disk})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			for i := 0; b.Loop(); i++ {
				sb, err := p.Create(b.Context(), sandbox.CreateParams{ID: fmt.Sprint("c", i)})
				if err != nil {
					b.Fatal(err)
				}
				if err := sb.Destroy(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("mkdir", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; b.Loop(); i++ {
			p := filepath.Join(dir, fmt.Sprint("c", i))
			if err := os.MkdirAll(filepath.Join(p, "workspace", "skills"), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.RemoveAll(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchPackage is the 200-file, 5 MiB package of the shared corpus's shape.
func benchPackage(b *testing.B) *pack.Package {
	files := []pack.File{{Path: "SKILL.md", Data: []byte("---\nname: big\ndescription: A big package.\n---\nbody\n")}}
	for i := range 199 {
		files = append(files, pack.File{Path: fmt.Sprintf("data/d%d/part-%03d.txt", i%10, i), Data: make([]byte, 5<<20/199), Exec: i%20 == 0})
	}
	pkg, err := pack.New(files, pack.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	return pkg
}

// BenchmarkPlace places a 200-file, 5 MiB package in a new sandbox: "cold"
// is the first time on this machine (the skill cache is filled and
// verified), "warm" a later task (a read-only mount of the verified copy).
// "cp-r" and "cp-al" copy and hard-link the same folder on the same disk
// for comparison.
func BenchmarkPlace(b *testing.B) {
	pkg := benchPackage(b)
	p, cfg := bwraptest.New(b)
	b.Run("cold", func(b *testing.B) {
		b.SetBytes(pkg.Size())
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			fresh, err := bwrap.New(b.Context(), bwrap.Config{Root: filepath.Join(b.TempDir(), "sb"), CacheDir: filepath.Join(b.TempDir(), "cache")})
			if err != nil {
				b.Fatal(err)
			}
			sb, err := fresh.Create(b.Context(), sandbox.CreateParams{ID: "cold"})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := sb.Place(b.Context(), "skills/big-1", pkg); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			sb.Destroy(b.Context())
			fresh.Close()
			b.StartTimer()
		}
	})
	first, err := p.Create(b.Context(), sandbox.CreateParams{ID: "first"})
	if err != nil {
		b.Fatal(err)
	}
	if err := first.Place(b.Context(), "skills/big-1", pkg); err != nil {
		b.Fatal(err)
	}
	b.Run("warm", func(b *testing.B) {
		b.SetBytes(pkg.Size())
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			sb, err := p.Create(b.Context(), sandbox.CreateParams{ID: fmt.Sprint("warm-", i)})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := sb.Place(b.Context(), "skills/big-1", pkg); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			sb.Destroy(b.Context())
			b.StartTimer()
		}
	})
	src := filepath.Join(cfg.Root, "source")
	os.MkdirAll(src, 0o755)
	if err := skillcache.WriteFiles(b.Context(), src, pkg, false); err != nil {
		b.Fatal(err)
	}
	for _, flag := range []string{"-r", "-al"} {
		b.Run("cp"+flag, func(b *testing.B) {
			b.SetBytes(pkg.Size())
			for i := 0; i < b.N; i++ {
				dst := filepath.Join(cfg.Root, fmt.Sprint("cp", flag, i))
				if out, err := exec.Command("cp", flag, src, dst).CombinedOutput(); err != nil {
					b.Fatal(err, string(out))
				}
				b.StopTimer()
				os.RemoveAll(dst)
				b.StartTimer()
			}
		})
	}
}
