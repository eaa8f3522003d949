package pack

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/skilld/skilld/skillmd"
)

// maxNamedSkills is how many skill folders DescribeSkills names before it
// only counts the rest: an error message stays readable for a repository
// holding hundreds of skills.
const maxNamedSkills = 10

// SkillDirs returns the folders of the package that hold a skill file
// (SKILL.md or skill.md), found as skillmd.Discover finds them on disk: the
// package root when it is a skill (then only "."), no folder inside a skill
// found (its references may hold SKILL.md examples), none inside the
// folders skillmd.SkipDir names. They come in the order Discover walks a
// directory, segment by segment.
//
// It is what tells an archive of several skills from a broken one, so that
// the error can name the skills instead of saying that SKILL.md is missing.
func (p *Package) SkillDirs() []string {
	present := make(map[string]bool, len(p.files))
	for _, f := range p.files {
		present[f.Path] = true
	}
	isSkill := func(dir string) bool {
		return skillmd.Filename(func(name string) bool {
			if dir != "." {
				name = dir + "/" + name
			}
			return present[name]
		}) != ""
	}
	if isSkill(".") {
		return []string{"."}
	}
	var dirs []string
	seen := map[string]bool{}
	for _, f := range p.files {
		dir := path.Dir(f.Path)
		if dir == "." || seen[dir] || !isSkill(dir) || inSkippedDir(dir) {
			continue
		}
		seen[dir] = true
		dirs = append(dirs, dir)
	}
	// Sorting by segments puts a parent before everything under it, so one
	// pass drops the skills nested in another.
	slices.SortFunc(dirs, func(a, b string) int { return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) })
	out := dirs[:0]
	for _, d := range dirs {
		if n := len(out); n > 0 && strings.HasPrefix(d, out[n-1]+"/") {
			continue
		}
		out = append(out, d)
	}
	return out
}

// inSkippedDir reports whether a folder lies in one that searches for skills
// leave out (version-control metadata, installed dependencies).
func inSkippedDir(dir string) bool {
	return slices.ContainsFunc(strings.Split(dir, "/"), skillmd.SkipDir)
}

// Sub returns the package of the files under dir (one of SkillDirs), with
// dir removed from their paths and kept as TopDir: the skill in that folder
// as it would be read from the folder itself. The files already passed the
// limits of the whole package, so none are applied again.
func (p *Package) Sub(dir string) (*Package, error) {
	if dir == "." || dir == "" {
		return p, nil
	}
	prefix := dir + "/"
	var files []File
	for _, f := range p.files {
		if rest, ok := strings.CutPrefix(f.Path, prefix); ok {
			files = append(files, File{Path: rest, Data: f.Data, Exec: f.Exec})
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("pack: the package has no folder %q", dir)
	}
	sub, err := New(files, Limits{})
	if err != nil {
		return nil, err
	}
	sub.topDir = path.Base(dir)
	return sub, nil
}

// DescribeSkills names the skill folders SkillDirs found, for a message:
// "4 skills (a, b, c, d)", "1 skill (tools/lint)", with the list cut after
// ten names ("…, and 5 more").
func DescribeSkills(dirs []string) string {
	noun := "skills"
	if len(dirs) == 1 {
		noun = "skill"
	}
	names := dirs
	more := ""
	if len(names) > maxNamedSkills {
		names, more = names[:maxNamedSkills], fmt.Sprintf(", and %d more", len(dirs)-maxNamedSkills)
	}
	return fmt.Sprintf("%d %s (%s%s)", len(dirs), noun, strings.Join(names, ", "), more)
}
