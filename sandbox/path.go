package sandbox

import (
	"path"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// CleanPath turns a path a model or a person gave into a clean path
// relative to /workspace ("." for the workspace itself). It accepts
// relative paths ("data/x.csv", "./x") and absolute ones under /workspace
// ("/workspace/x"), and refuses anything else: other absolute paths, paths
// that climb out with "..", NUL bytes and backslashes. The error names the
// path.
func CleanPath(p string) (string, error) {
	bad := func(why string) (string, error) {
		return "", skilld.Errorf(skilld.EINVALID, "path %q %s; give a path inside %s, relative to it or starting with %s/", p, why, Workdir, Workdir)
	}
	switch {
	case p == "":
		return bad("is empty")
	case strings.IndexByte(p, 0) >= 0:
		return bad("contains a NUL byte")
	case strings.ContainsRune(p, '\\'):
		return bad("contains a backslash")
	}
	rel := p
	if path.IsAbs(p) {
		c := path.Clean(p)
		if c != Workdir && !strings.HasPrefix(c, Workdir+"/") {
			return bad("is outside the workspace")
		}
		rel = strings.TrimPrefix(strings.TrimPrefix(c, Workdir), "/")
		if rel == "" {
			return ".", nil
		}
	}
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") {
		return bad("leads out of the workspace")
	}
	return c, nil
}

// InSkills reports whether the clean relative path rel is skills/ or
// anything under it.
func InSkills(rel string) bool {
	return rel == SkillsDir || strings.HasPrefix(rel, SkillsDir+"/")
}

// CheckSkillDir checks a Place target: "skills/<name>" with one safe name.
func CheckSkillDir(dir string) (name string, err error) {
	name, ok := strings.CutPrefix(dir, SkillsDir+"/")
	if !ok || name == "" || strings.Contains(name, "/") || name == "." || name == ".." || pack.CheckPath(dir) != nil {
		return "", skilld.Errorf(skilld.EINVALID, "skill folder %q must be %s/<name> with one plain name", dir, SkillsDir)
	}
	return name, nil
}

// CheckID checks a sandbox ID: 1 to 128 letters, digits, '-' or '_', so it
// is safe as a folder name and in a cgroup path.
func CheckID(id string) error {
	if id == "" || len(id) > 128 {
		return skilld.Errorf(skilld.EINVALID, "sandbox id %q must be 1 to 128 characters", id)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return skilld.Errorf(skilld.EINVALID, "sandbox id %q may hold only letters, digits, '-' and '_'", id)
		}
	}
	return nil
}
