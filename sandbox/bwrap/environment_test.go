package bwrap_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/sandbox/deps"
)

// TestDependencies: a skill's requirements.txt and package.json with its
// lockfile are installed once, from the configured indexes through the
// proxy, and its scripts import them; a sandbox of another task gets the
// same layer without installing again; a failing install says why and
// the sandbox goes on.
func TestDependencies(t *testing.T) {
	bwraptest.Require(t)
	for _, tool := range []string{"python3", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	ix := bwraptest.NewPackageIndex(t)
	dir := t.TempDir()
	p, err := bwrap.New(t.Context(), bwrap.Config{Root: filepath.Join(dir, "sb"), CacheDir: filepath.Join(dir, "cache"),
		// One byte: every new layer pushes out each other one not in use.
		Deps: bwrap.DepsConfig{Indexes: deps.Indexes{Python: ix.URL + "/simple", NPM: ix.URL + "/"}, CacheSize: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	defer bwraptest.UnmountAll(t, dir)
	pkg, err := pack.New([]pack.File{
		{Path: "SKILL.md", Data: []byte("---\nname: deps\ndescription: d\n---\nRun scripts/run.sh.\n")},
		{Path: "requirements.txt", Data: []byte("probe-pkg==1.0\n")},
		{Path: "package.json", Data: []byte(`{"name": "skill", "version": "1.0.0", "dependencies": {"probe-node": "1.0.0"}}`)},
		{Path: "package-lock.json", Data: []byte(ix.Lockfile())},
		{Path: "scripts/run.sh", Data: []byte("python3 -c 'import probe_pkg; print(\"python\", probe_pkg.VALUE)'\nnode -e 'console.log(\"node\", require(\"probe-node\"))'\n")},
	}, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	const at = "skills/deps-12345678"
	use := func(id string) (*sandbox.Environment, sandbox.Sandbox, error) {
		sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sb.Destroy(t.Context()) })
		if err := sb.Place(t.Context(), at, pkg); err != nil {
			t.Fatal(err)
		}
		env, err := sb.(sandbox.Environments).Environment(t.Context(), at, pkg, nil)
		return env, sb, err
	}
	env, sb, err := use("first")
	if os.Geteuid() != 0 {
		if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "not root") {
			t.Errorf("installing as a server that is not root: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, env.Output)
	}
	if env.Cached || strings.Join(env.Kinds, ",") != "python,node" || !strings.Contains(env.Output, "installed") {
		t.Errorf("first environment: %+v", env)
	}
	res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: "sh " + at + "/scripts/run.sh; touch /deps/deps-12345678/x 2>/dev/null && echo WRITABLE"})
	if err != nil || string(res.Output) != "python 42\nnode 42\n" {
		t.Errorf("the skill's scripts: %q %v", res.Output, err)
	}
	installs := ix.Downloads()
	env2, sb2, err := use("second")
	if err != nil || !env2.Cached || env2.Key != env.Key {
		t.Fatalf("second environment: %+v %v", env2, err)
	}
	if res, _ := sb2.Exec(t.Context(), sandbox.ExecParams{Command: "sh " + at + "/scripts/run.sh"}); string(res.Output) != "python 42\nnode 42\n" {
		t.Errorf("the second sandbox: %q", res.Output)
	}
	if ix.Downloads() != installs {
		t.Errorf("the second sandbox installed again: %d downloads, then %d", installs, ix.Downloads())
	}

	// A new layer past the cache's size leaves the one both sandboxes use.
	other, _ := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("---\nname: other\ndescription: d\n---\nx\n")}, {Path: "requirements.txt", Data: []byte("probe-pkg==1.0\n")}}, pack.Limits{})
	sbo, err := p.Create(t.Context(), sandbox.CreateParams{ID: "other"})
	if err != nil {
		t.Fatal(err)
	}
	defer sbo.Destroy(t.Context())
	sbo.Place(t.Context(), "skills/other-1", other)
	if env, err := sbo.(sandbox.Environments).Environment(t.Context(), "skills/other-1", other, nil); err != nil || env.Cached {
		t.Fatalf("another package's environment: %+v %v", env, err)
	}
	if res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: "sh " + at + "/scripts/run.sh"}); err != nil || string(res.Output) != "python 42\nnode 42\n" {
		t.Errorf("a layer in use was evicted: %v %v", res, err)
	}

	broken, _ := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("---\nname: broken\ndescription: d\n---\nx\n")}, {Path: "requirements.txt", Data: []byte("no-such-package==9.9\n")}}, pack.Limits{})
	sb3, err := p.Create(t.Context(), sandbox.CreateParams{ID: "broken"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb3.Destroy(t.Context())
	sb3.Place(t.Context(), "skills/broken-1", broken)
	env3, err := sb3.(sandbox.Environments).Environment(t.Context(), "skills/broken-1", broken, nil)
	if err == nil || env3 == nil || !strings.Contains(env3.Output, "no-such-package") {
		t.Errorf("a failing install: %v, %+v", err, env3)
	}
	if res, err := sb3.Exec(t.Context(), sandbox.ExecParams{Command: "echo goes on"}); err != nil || string(res.Output) != "goes on\n" {
		t.Errorf("after a failing install: %q %v", res.Output, err)
	}
}

// TestDependenciesWait: an activation waits for a slow install within
// DepsConfig.Wait, hearing its progress meanwhile, and then goes on
// without it; the install goes on, once, and the next activation gets its
// layer; closing the provider stops an install and leaves no builder.
func TestDependenciesWait(t *testing.T) {
	bwraptest.Require(t)
	if os.Geteuid() != 0 {
		t.Skip("installs take a root server (TestDependencies checks the refusal)")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	ix := bwraptest.NewPackageIndex(t)
	release := ix.Hold()
	defer release()
	dir := t.TempDir()
	defer bwraptest.UnmountAll(t, dir)
	cfg := bwrap.Config{Root: filepath.Join(dir, "sb"), CacheDir: filepath.Join(dir, "cache"),
		Deps: bwrap.DepsConfig{Indexes: deps.Indexes{Python: ix.URL + "/simple"}, Wait: 3 * time.Second, ProgressEvery: 100 * time.Millisecond}}
	p, err := bwrap.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			p.Close()
		}
	}()
	pkg, _ := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("---\nname: slow\ndescription: d\n---\nx\n")}, {Path: "requirements.txt", Data: []byte("probe-pkg==1.0\n")}}, pack.Limits{})
	activate := func(p *bwrap.Provider, id string) (*sandbox.Environment, []sandbox.EnvironmentProgress, error) {
		sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sb.Destroy(context.Background()) })
		if err := sb.Place(t.Context(), "skills/slow-1", pkg); err != nil {
			t.Fatal(err)
		}
		var seen []sandbox.EnvironmentProgress
		env, err := sb.(sandbox.Environments).Environment(t.Context(), "skills/slow-1", pkg, func(pr sandbox.EnvironmentProgress) { seen = append(seen, pr) })
		return env, seen, err
	}
	_, seen, err := activate(p, "first")
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "not installed within 3s") {
		t.Fatalf("an install past the wait: %v", err)
	}
	if len(seen) == 0 || !strings.Contains(seen[len(seen)-1].Line, "probe") || seen[len(seen)-1].Elapsed <= 0 {
		t.Errorf("progress while waiting: %+v", seen)
	}
	release()
	env, _, err := activate(p, "second")
	if err != nil || ix.Downloads() != 1 {
		t.Fatalf("the next activation: %+v %v, %d downloads (want the first install's one)", env, err, ix.Downloads())
	}

	// An install under way when the provider closes is stopped, and its
	// builder removed.
	release2 := ix.Hold()
	defer release2()
	other, _ := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("---\nname: other\ndescription: d\n---\nx\n")}, {Path: "requirements.txt", Data: []byte("probe-pkg==1.0\n")}}, pack.Limits{})
	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "third"})
	if err != nil {
		t.Fatal(err)
	}
	sb.Place(t.Context(), "skills/other-1", other)
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if _, err := sb.(sandbox.Environments).Environment(ctx, "skills/other-1", other, nil); err == nil {
		t.Fatal("an install held by the index finished")
	}
	sb.Destroy(t.Context())
	start := time.Now()
	p.Close()
	closed = true
	entries, _ := os.ReadDir(cfg.Root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".deps-") {
			t.Errorf("a builder left behind after Close: %s", e.Name())
		}
	}
	t.Logf("Close with an install under way took %v", time.Since(start))
}
