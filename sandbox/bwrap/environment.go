package bwrap

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/deps"
)

var _ sandbox.Environments = (*sb)(nil)

// DepsConfig configures the dependency layers of placed skills.
type DepsConfig struct {
	// Dir holds the layers (default: deps/ next to CacheDir).
	Dir string
	// Indexes are where installs come from (default PyPI and npm).
	Indexes deps.Indexes
	// CacheSize bounds the layers kept, the least recently used going
	// first (0: no bound).
	CacheSize int64
}

// depsMount is where a placed skill's layer is in every command.
func depsMount(name string) string { return "/deps/" + name }

// builds serializes the builds of one layer within a provider.
type builds struct {
	mu   sync.Mutex
	keys map[string]*sync.Mutex
}

func (b *builds) lock(key string) func() {
	b.mu.Lock()
	if b.keys == nil {
		b.keys = map[string]*sync.Mutex{}
	}
	m := b.keys[key]
	if m == nil {
		m = &sync.Mutex{}
		b.keys[key] = m
	}
	b.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// Environment installs the dependencies pkg declares, once per package,
// root and indexes, and shows them to later commands at /deps/<name>:
// Python's on PYTHONPATH, Node's on NODE_PATH, their programs on PATH.
func (s *sb) Environment(ctx context.Context, dir string, pkg *pack.Package) (*sandbox.Environment, error) {
	kinds := deps.Needs(pkg)
	if len(kinds) == 0 {
		return nil, nil
	}
	name, err := sandbox.CheckSkillDir(dir)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	m, ok := s.mounts[name]
	s.mu.Unlock()
	if !ok || m.digest != pkg.Digest() {
		return nil, skilld.Errorf(skilld.EINVALID, "%s holds no such package: place it first", dir)
	}
	p := s.p
	env := &sandbox.Environment{Key: deps.Key(pkg.Digest(), s.root.Digest, kinds, p.cfg.Deps.Indexes)}
	for _, k := range kinds {
		env.Kinds = append(env.Kinds, string(k))
	}
	if m.layer != nil {
		env.Cached = true // an activation again
		return env, nil
	}
	start := time.Now()
	layer, cached := p.deps.Get(env.Key)
	if !cached {
		unlock := p.builds.lock(env.Key)
		if layer, cached = p.deps.Get(env.Key); !cached {
			layer, env.Output, err = p.buildLayer(ctx, env.Key, s.root, pkg, kinds)
		}
		unlock()
		if err != nil {
			env.Duration = time.Since(start)
			return env, err
		}
	}
	env.Cached, env.Duration = cached, time.Since(start)
	bind := layer.Dir
	if s.live != "" {
		// As root, bwrap reaches the layer through the hub.
		bind = filepath.Join(s.live, "deps", name)
		err := os.MkdirAll(bind, 0o755)
		if err == nil {
			err = p.vol.Bind(layer.Dir, bind, true)
		}
		if err != nil {
			layer.Close()
			return env, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.mounts[name]; ok && m.layer == nil {
		// In use until the sandbox goes.
		m.deps, m.layer = bind, layer
		s.mounts[name] = m
	} else {
		layer.Close() // a concurrent call got there first
	}
	return env, nil
}

// buildLayer installs kinds for pkg in a sandbox of its own on root, with
// the network to the package indexes only, and keeps what it installed as
// the layer key. It returns the installer's last lines.
func (p *Provider) buildLayer(ctx context.Context, key string, root *rootView, pkg *pack.Package, kinds []deps.Kind) (*deps.Layer, string, error) {
	if !p.root {
		return nil, "", skilld.Errorf(skilld.EUNAVAILABLE, "installing a skill's dependencies takes the network through the sandbox's proxy, and a server that is not root cannot give it")
	}
	var b [4]byte
	rand.Read(b[:])
	lim := p.limits
	lim.Timeout, lim.CPU = sandbox.MaxTimeout, sandbox.MaxTimeout
	lim.Memory, lim.Processes = max(lim.Memory, 2<<30), max(lim.Processes, 1024)
	builder, err := p.Create(ctx, sandbox.CreateParams{ID: ".deps-" + key[:16] + "-" + hex.EncodeToString(b[:]), Rootfs: root.Name,
		Network: true, Allow: p.cfg.Deps.Indexes.Hosts(kinds), Limits: lim})
	if err != nil {
		return nil, "", err
	}
	defer builder.Destroy(context.WithoutCancel(ctx))
	const dir = sandbox.SkillsDir + "/package"
	if err := builder.Place(ctx, dir, pkg); err != nil {
		return nil, "", err
	}
	res, err := builder.Exec(ctx, sandbox.ExecParams{Command: deps.Script(dir, kinds, p.cfg.Deps.Indexes)})
	if err != nil {
		return nil, "", err
	}
	tail := lastLines(string(res.Output), 20)
	if res.ExitCode != 0 || res.Limit != "" {
		return nil, tail, skilld.Errorf(skilld.EUNAVAILABLE, "installing the skill's dependencies failed (%s)", strings.Trim(res.Summary(), "[]"))
	}
	layer, err := p.deps.Put(key, filepath.Join(builder.HostPath(), "out"))
	return layer, tail, err
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// depsArgs binds the placed skills' layers and adds them to the
// environment's search paths, after what env already has.
func depsArgs(mounts map[string]mount, names []string, env []string) ([]string, []string) {
	var args, py, node, bin []string
	for _, n := range names {
		d := mounts[n].deps
		if d == "" {
			continue
		}
		at := depsMount(n)
		args = append(args, "--ro-bind", d, at)
		if _, err := os.Stat(filepath.Join(d, deps.PythonDir)); err == nil {
			py = append(py, at+"/"+deps.PythonDir)
			bin = append(bin, at+"/"+deps.PythonDir+"/bin")
		}
		if _, err := os.Stat(filepath.Join(d, deps.NodeDir)); err == nil {
			node = append(node, at+"/"+deps.NodeDir)
			bin = append(bin, at+"/"+deps.NodeDir+"/.bin")
		}
	}
	env = appendPath(env, "PYTHONPATH", py)
	env = appendPath(env, "NODE_PATH", node)
	env = appendPath(env, "PATH", bin)
	return args, env
}

// appendPath adds dirs to the colon-separated variable name of env.
func appendPath(env []string, name string, dirs []string) []string {
	if len(dirs) == 0 {
		return env
	}
	add := strings.Join(dirs, ":")
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			if v == "" {
				env[i] = name + "=" + add
			} else {
				env[i] = fmt.Sprintf("%s=%s:%s", name, v, add)
			}
			return env
		}
	}
	return append(env, name+"="+add)
}
