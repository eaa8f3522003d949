package bwrap

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
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
	// Wait bounds how long an activation waits for a layer being built
	// (default DefaultDepsWait). Past it the activation goes on without
	// the layer and the build goes on, up to sandbox.MaxTimeout, for the
	// next activation.
	Wait time.Duration
	// ProgressEvery is how often a build's progress is reported while it
	// prints (default DefaultDepsProgress).
	ProgressEvery time.Duration
}

// Defaults of DepsConfig.
const (
	DefaultDepsWait     = 5 * time.Minute
	DefaultDepsProgress = 2 * time.Second
)

// depsMount is where a placed skill's layer is in every command.
func depsMount(name string) string { return "/deps/" + name }

// builds are the layers being built by a provider, one build per key
// however many sandboxes wait for it. A build runs on its own context, not
// the one of the activation that started it: an activation that stops
// waiting (its deadline, its task cancelled) leaves it to finish for the
// next one. Close stops them all.
type builds struct {
	mu      sync.Mutex
	running map[string]*build
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// build is one layer being installed.
type build struct {
	done  chan struct{}
	start time.Time
	tail  tailWriter
	// Set before done is closed.
	output string
	err    error
}

func (b *builds) init() {
	b.ctx, b.stop = context.WithCancel(context.Background())
	b.running = map[string]*build{}
}

// close stops the builds and waits for them to end.
func (b *builds) close() {
	if b.stop != nil {
		b.stop()
	}
	b.wg.Wait()
}

// get returns the build of key, started with run when none is running.
func (b *builds) get(key string, run func(ctx context.Context, bd *build) (string, error)) *build {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bd := b.running[key]; bd != nil {
		return bd
	}
	bd := &build{done: make(chan struct{}), start: time.Now()}
	b.running[key] = bd
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		bd.output, bd.err = run(b.ctx, bd)
		b.mu.Lock()
		delete(b.running, key)
		b.mu.Unlock()
		close(bd.done)
	}()
	return bd
}

// Environment installs the dependencies pkg declares, once per package,
// root and indexes, and shows them to later commands at /deps/<name>:
// Python's on PYTHONPATH, Node's on NODE_PATH, their programs on PATH.
// While a build runs, progress (when not nil) is given the installer's
// latest line every DepsConfig.ProgressEvery it printed something.
func (s *sb) Environment(ctx context.Context, dir string, pkg *pack.Package, progress func(sandbox.EnvironmentProgress)) (*sandbox.Environment, error) {
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
		bd := p.builds.get(env.Key, func(ctx context.Context, bd *build) (string, error) {
			if l, ok := p.deps.Get(env.Key); ok { // another process built it
				l.Close()
				return "", nil
			}
			l, out, err := p.buildLayer(ctx, env.Key, s.root, pkg, kinds, &bd.tail)
			if l != nil {
				l.Close() // each waiter takes a lease of its own
			}
			return out, err
		})
		if err := p.wait(ctx, bd, progress); err != nil {
			env.Duration = time.Since(start)
			return env, err
		}
		env.Output = bd.output
		if bd.err != nil {
			env.Duration = time.Since(start)
			return env, bd.err
		}
		if layer, ok = p.deps.Get(env.Key); !ok {
			return env, skilld.Errorf(skilld.EUNAVAILABLE, "the skill's dependency layer was removed as soon as it was built (the cache, --env-cache-size, is too small for the layers in use)")
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

// wait waits for bd within DepsConfig.Wait and ctx, reporting its
// progress. Past the deadline the build goes on without this caller.
func (p *Provider) wait(ctx context.Context, bd *build, progress func(sandbox.EnvironmentProgress)) error {
	limit := cmp.Or(p.cfg.Deps.Wait, DefaultDepsWait)
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	every := time.NewTicker(cmp.Or(p.cfg.Deps.ProgressEvery, DefaultDepsProgress))
	defer every.Stop()
	seen := 0
	for {
		select {
		case <-bd.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return skilld.Errorf(skilld.EUNAVAILABLE, "the skill's dependencies were not installed within %s (--env-wait); the install goes on, and activating the skill again once it is done uses them", limit)
		case <-every.C:
			line, n := bd.tail.last()
			if progress != nil && n != seen {
				seen = n
				progress(sandbox.EnvironmentProgress{Elapsed: time.Since(bd.start), Line: line, Lines: n})
			}
		}
	}
}

// buildLayer installs kinds for pkg in a sandbox of its own on root, with
// the network to the package indexes only, and keeps what it installed as
// the layer key. It returns the installer's last lines, and shows its
// output to progress as it comes.
func (p *Provider) buildLayer(ctx context.Context, key string, root *rootView, pkg *pack.Package, kinds []deps.Kind, progress io.Writer) (*deps.Layer, string, error) {
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
	res, err := builder.Exec(ctx, sandbox.ExecParams{Command: deps.Script(dir, kinds, p.cfg.Deps.Indexes), Progress: progress})
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

// tailWriter keeps the last complete, non-blank line written to it (at
// most maxProgressLine bytes of it) and counts the lines: what a build's
// progress shows. Its memory is bounded whatever is written.
type tailWriter struct {
	mu      sync.Mutex
	line    []byte
	partial []byte
	lines   int
}

const maxProgressLine = 200

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for rest := p; len(rest) > 0; {
		chunk, after, found := bytes.Cut(rest, []byte("\n"))
		if room := maxProgressLine - len(w.partial); room > 0 {
			w.partial = append(w.partial, chunk[:min(len(chunk), room)]...)
		}
		if !found {
			break
		}
		if t := bytes.TrimSpace(w.partial); len(t) > 0 {
			w.line = append(w.line[:0], t...)
			w.lines++
		}
		w.partial, rest = w.partial[:0], after
	}
	return len(p), nil
}

// last is the latest line and the count of lines so far.
func (w *tailWriter) last() (string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.ToValidUTF8(string(w.line), "?"), w.lines
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
