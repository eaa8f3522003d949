package bwrap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/internal/hostfs"
	"github.com/skilld/skilld/sandbox/internal/proc"
)

var _ sandbox.Sandbox = (*sb)(nil)

// sb is one sandbox.
type sb struct {
	*hostfs.Folder
	p       *Provider
	network bool
	env     []string
	limits  sandbox.Limits

	mu     sync.Mutex
	mounts map[string]mount // skill folder name → its cached copy
}

type mount struct {
	digest string
	dir    string
}

func (s *sb) mountDirs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.mounts))
	for name, m := range s.mounts {
		out[name] = m.dir
	}
	return out
}

// Exec runs the command in a new bubblewrap sandbox over the workspace.
func (s *sb) Exec(ctx context.Context, p sandbox.ExecParams) (*sandbox.Result, error) {
	ctx, lim, done, err := s.Begin(ctx, p, s.limits)
	if err != nil {
		return nil, err
	}
	defer done()
	s.mu.Lock()
	mounts := maps.Clone(s.mounts)
	s.mu.Unlock()
	if err := s.checkMountPoint(); err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer statusR.Close()
	status := make(chan int, 1)
	go func() { status <- readExitCode(statusR) }()
	out, err := s.p.controls.Run(ctx, proc.Spec{
		Argv: append([]string{s.p.bwrap}, s.args(p.Command, 3, mounts, lim)...),
		// bwrap's own environment is visible to the sandbox's pid 1: keep
		// it empty of anything but PATH.
		Env: []string{"PATH=/usr/bin:/bin"}, Dir: s.Dir(), ExtraFiles: []*os.File{statusW},
		Limits: lim,
	})
	statusW.Close()
	if err != nil {
		return nil, err
	}
	code := <-status
	res := &sandbox.Result{Output: out.Output, Truncated: out.Truncated, Limit: out.Limit, ExitCode: code, Limits: lim, Duration: out.Duration}
	if code < 0 && out.Limit == "" {
		// bwrap itself failed before the command ran: its message is the
		// output.
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "the sandbox did not start: %s", strings.TrimSpace(string(out.Output)))
	}
	if res.Limit == "" {
		res.Limit = proc.LimitOfExit(code)
	}
	return res, nil
}

// readExitCode reads bwrap's JSON status stream to its end and returns the
// command's exit code, or -1 when bwrap never ran it.
func readExitCode(r *os.File) int {
	code := -1
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var st struct {
			ExitCode *int `json:"exit-code"`
		}
		if err := dec.Decode(&st); err != nil {
			return code
		}
		if st.ExitCode != nil {
			code = *st.ExitCode
		}
	}
}

// checkMountPoint makes sure skills/ in the workspace is a plain folder
// before bwrap mounts over it: nothing a command or a tool does can leave
// something else there, but a sandbox that finds otherwise repairs it
// rather than follow it.
func (s *sb) checkMountPoint() error {
	p := filepath.Join(s.Workspace, sandbox.SkillsDir)
	info, err := os.Lstat(p)
	if err == nil && info.IsDir() {
		return nil
	}
	if err == nil {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("repairing %s/: %w", sandbox.SkillsDir, err)
		}
	}
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("repairing %s/: %w", sandbox.SkillsDir, err)
	}
	return nil
}

// Place makes pkg visible at dir: a verified read-only copy in the skill
// cache, bound there in every later command. A warm placement writes
// nothing.
func (s *sb) Place(ctx context.Context, dir string, pkg *pack.Package) error {
	name, err := sandbox.CheckSkillDir(dir)
	if err != nil {
		return err
	}
	s.mu.Lock()
	m, ok := s.mounts[name]
	s.mu.Unlock()
	if err := s.Removed(); err != nil {
		return err
	}
	switch {
	case ok && m.digest == pkg.Digest():
		return nil
	case ok:
		return skilld.Errorf(skilld.ECONFLICT, "%s holds another package (%s)", dir, m.digest)
	}
	cached, err := s.p.cache.Dir(ctx, pkg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.mounts[name]; ok && m.digest != pkg.Digest() {
		return skilld.Errorf(skilld.ECONFLICT, "%s holds another package (%s)", dir, m.digest)
	}
	s.mounts[name] = mount{digest: pkg.Digest(), dir: cached}
	return nil
}
