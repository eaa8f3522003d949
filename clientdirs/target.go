// Package clientdirs writes a workspace's skills into the folders agent
// clients read them from (.claude/skills, .agents/skills, …) and keeps a
// lockfile, skills.lock.json, saying which skill versions it wrote where, so
// that a later sync updates them, notices local edits, and reproduces the
// same bytes elsewhere.
//
// Everything here is local: the caller fetches packages from a server and
// hands them over. Each skill folder is written into a temporary folder
// beside it and renamed into place, so an interrupted sync never leaves half
// a skill; folders the lockfile does not name are never changed unless the
// caller forces it.
package clientdirs

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/skilld/skilld"
)

// Scope says where a named target's folder is: in the project (relative to
// the working directory) or in the user's home directory.
type Scope int

const (
	Project Scope = iota
	User
)

// Target is one skills folder a sync writes to. Dir holds one folder per
// skill, named after it. Root is the folder holding the lockfile that
// records what was written there: the working directory for project
// targets, the skills folder's parent for user targets and for folders
// outside the working directory.
type Target struct {
	// Name is the client's name ("claude") or, for a folder given as a
	// path, that path as given.
	Name string
	Dir  string // absolute
	Root string // absolute
}

// client is a known agent client and where it reads skills from, relative to
// the project folder and to the home directory.
type client struct{ name, project, user string }

// clients lists the known agent clients. Copilot reads personal skills from
// ~/.copilot/skills, not ~/.github/skills.
func clients() []client {
	return []client{
		{"claude", ".claude/skills", ".claude/skills"},
		{"agents", ".agents/skills", ".agents/skills"},
		{"codex", ".codex/skills", ".codex/skills"},
		{"copilot", ".github/skills", ".copilot/skills"},
		{"gemini", ".gemini/skills", ".gemini/skills"},
		{"cursor", ".cursor/skills", ".cursor/skills"},
	}
}

// ClientNames lists the names Resolve knows, for help texts.
func ClientNames() []string {
	var out []string
	for _, c := range clients() {
		out = append(out, c.name)
	}
	return out
}

// SplitTargets splits --target values, each one name or a comma-separated
// list of them, dropping empty ones and repeats.
func SplitTargets(values []string) []string {
	var out []string
	for _, v := range values {
		for s := range strings.SplitSeq(v, ",") {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// Resolve turns a --target value into a Target: a known client name (see
// ClientNames) in scope, or else a path to the skills folder itself,
// relative to cwd. cwd and home must be absolute; home is only needed for
// User scope.
func Resolve(spec string, scope Scope, cwd, home string) (Target, error) {
	if spec == "" {
		return Target{}, skilld.Errorf(skilld.EINVALID, "empty target: give a client (%s) or a folder", strings.Join(ClientNames(), ", "))
	}
	if !filepath.IsAbs(cwd) {
		return Target{}, skilld.Errorf(skilld.EINVALID, "working directory %q is not absolute", cwd)
	}
	for _, c := range clients() {
		if c.name != spec {
			continue
		}
		if scope == User {
			if !filepath.IsAbs(home) {
				return Target{}, skilld.Errorf(skilld.EINVALID, "home directory %q is not absolute", home)
			}
			dir := filepath.Join(home, filepath.FromSlash(c.user))
			return Target{Name: c.name, Dir: dir, Root: filepath.Dir(dir)}, nil
		}
		return Target{Name: c.name, Dir: filepath.Join(cwd, filepath.FromSlash(c.project)), Root: cwd}, nil
	}
	dir := spec
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	dir = filepath.Clean(dir)
	if scope == Project && inside(cwd, dir) {
		return Target{Name: spec, Dir: dir, Root: cwd}, nil
	}
	if filepath.Dir(dir) == dir {
		return Target{}, skilld.Errorf(skilld.EINVALID, "target %q is the file system root: give a skills folder", spec)
	}
	return Target{Name: spec, Dir: dir, Root: filepath.Dir(dir)}, nil
}

// inside reports whether dir is strictly below root.
func inside(root, dir string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Folder is the folder of skill name in the target.
func (t Target) Folder(name string) string { return filepath.Join(t.Dir, name) }

// placement records where the target keeps skill name, relative to Root.
func (t Target) placement(name string) (Placement, error) {
	rel, err := filepath.Rel(t.Root, t.Folder(name))
	if err != nil {
		return Placement{}, skilld.Errorf(skilld.EINVALID, "target %q: %w", t.Name, err)
	}
	p := Placement{Target: t.Name, Folder: filepath.ToSlash(rel)}
	if err := checkFolder(p.Folder, name); err != nil {
		return Placement{}, err
	}
	return p, nil
}

// GroupByRoot splits targets by the lockfile they are recorded in, keeping
// their order.
func GroupByRoot(targets []Target) [][]Target {
	var groups [][]Target
	for _, t := range targets {
		i := slices.IndexFunc(groups, func(g []Target) bool { return g[0].Root == t.Root })
		if i < 0 {
			groups = append(groups, []Target{t})
			continue
		}
		if !slices.ContainsFunc(groups[i], func(o Target) bool { return o.Dir == t.Dir }) {
			groups[i] = append(groups[i], t)
		}
	}
	return groups
}

// RecordedTargets returns the skills folders a lockfile in root records,
// one Target per folder, named as recorded, in the order first met.
func RecordedTargets(root string, l *Lockfile) []Target {
	var out []Target
	for _, s := range l.Skills {
		for _, p := range s.Targets {
			dir := filepath.Dir(filepath.Join(root, filepath.FromSlash(p.Folder)))
			if !slices.ContainsFunc(out, func(t Target) bool { return t.Dir == dir }) {
				out = append(out, Target{Name: p.Target, Dir: dir, Root: root})
			}
		}
	}
	return out
}
