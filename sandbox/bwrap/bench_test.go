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
	"github.com/skilld/skilld/sandbox/deps"
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

// BenchmarkExecRoots is `true` on each kind of sandbox, in one run: the
// host's folders (today's default), a root file system (busybox), and the
// host's folders with the network through the proxy (its listener made in
// the command's namespace).
func BenchmarkExecRoots(b *testing.B) {
	bwraptest.Require(b)
	busybox, err := bwrap.DirRoot("busybox", bwraptest.BusyboxRoot(b))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	p, err := bwrap.New(b.Context(), bwrap.Config{Root: filepath.Join(dir, "sb"), CacheDir: filepath.Join(dir, "cache"), Roots: []bwrap.Root{bwrap.HostRoot(), busybox}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, c := range []struct {
		name string
		p    sandbox.CreateParams
	}{
		{"host", sandbox.CreateParams{ID: "host"}},
		{"rootfs", sandbox.CreateParams{ID: "rootfs", Rootfs: "busybox"}},
		{"proxy", sandbox.CreateParams{ID: "proxy", Network: true, Allow: []string{"127.0.0.1:9"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			sb, err := p.Create(b.Context(), c.p)
			if err != nil {
				b.Skip(err) // the proxy needs root
			}
			defer sb.Destroy(b.Context())
			for b.Loop() {
				if res, err := sb.Exec(b.Context(), sandbox.ExecParams{Command: "true"}); err != nil || res.ExitCode != 0 {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// BenchmarkEnvironment places a skill in a new sandbox: "plain" without
// dependencies; "cached" with a requirements.txt whose layer an earlier
// task built (Place, then Environment finds the layer, checks nothing new
// and binds it); "cold" builds the layer (pip from an index on 127.0.0.1,
// through the proxy), once per iteration on a fresh store.
func BenchmarkEnvironment(b *testing.B) {
	bwraptest.Require(b)
	if os.Geteuid() != 0 {
		b.Skip("installs take the network through the proxy, which takes root")
	}
	ix := bwraptest.NewPackageIndex(b)
	files := []pack.File{{Path: "SKILL.md", Data: []byte("---\nname: d\ndescription: d\n---\nx\n")}, {Path: "scripts/run.py", Data: []byte("import probe_pkg\n")}}
	plain, _ := pack.New(files, pack.Limits{})
	withDeps, _ := pack.New(append(files, pack.File{Path: "requirements.txt", Data: []byte("probe-pkg==1.0\n")}), pack.Limits{})
	newProvider := func(b *testing.B) *bwrap.Provider {
		dir := b.TempDir()
		p, err := bwrap.New(b.Context(), bwrap.Config{Root: filepath.Join(dir, "sb"), CacheDir: filepath.Join(dir, "cache"),
			Deps: bwrap.DepsConfig{Indexes: deps.Indexes{Python: ix.URL + "/simple"}}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Close(); bwraptest.UnmountAll(b, dir) })
		return p
	}
	place := func(b *testing.B, p *bwrap.Provider, i int, pkg *pack.Package) {
		b.StopTimer()
		sb, err := p.Create(b.Context(), sandbox.CreateParams{ID: fmt.Sprint("s", i)})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := sb.Place(b.Context(), "skills/d-1", pkg); err != nil {
			b.Fatal(err)
		}
		if _, err := sb.(sandbox.Environments).Environment(b.Context(), "skills/d-1", pkg, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		sb.Destroy(b.Context())
		b.StartTimer()
	}
	p := newProvider(b)
	place(b, p, -1, withDeps) // builds the layer and fills the cache
	place(b, p, -2, plain)
	b.Run("plain", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			place(b, p, i, plain)
		}
	})
	b.Run("cached", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			place(b, p, i, withDeps)
		}
	})
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			fresh := newProvider(b)
			b.StartTimer()
			place(b, fresh, i, withDeps)
		}
	})
}
