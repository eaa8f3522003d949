package skillmd

import (
	"context"
	"io/fs"
	"path"
	"strings"
)

// Discover returns the skill directories under root in fsys, in lexical
// order: every directory holding a SKILL.md (or skill.md) file. It does not
// look inside a skill it found (a skill's own references may contain
// SKILL.md examples), nor inside hidden directories or node_modules. Root
// itself is returned when it is a skill.
func Discover(ctx context.Context, fsys fs.FS, root string) ([]string, error) {
	found, err := Find(ctx, fsys, root)
	if err != nil {
		return nil, err
	}
	dirs := make([]string, len(found))
	for i, f := range found {
		dirs[i] = f.Dir
	}
	return dirs, nil
}

// Found is a skill Find found: its directory and the name of its skill
// file there.
type Found struct {
	Dir, File string
}

// Path is the skill file's path in the file system.
func (f Found) Path() string { return path.Join(f.Dir, f.File) }

// Find is Discover that also says which file each skill has, so that
// CheckFound reads it without looking at the directory again.
func Find(ctx context.Context, fsys fs.FS, root string) ([]Found, error) {
	var found []Found
	var walk func(dir string) error
	walk = func(dir string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Most directories walked are skills: one stat says so, where
		// listing the directory costs several system calls. (Lstat, as the
		// listing would: a link named SKILL.md is not a skill file.)
		if fi, err := fs.Lstat(fsys, path.Join(dir, "SKILL.md")); err == nil && fi.Mode().IsRegular() {
			found = append(found, Found{Dir: dir, File: "SKILL.md"})
			return nil
		}
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return err
		}
		file := Filename(func(n string) bool {
			for _, e := range entries {
				if e.Name() == n {
					return e.Type().IsRegular()
				}
			}
			return false
		})
		if file != "" {
			found = append(found, Found{Dir: dir, File: file})
			return nil
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" {
				continue
			}
			if err := walk(path.Join(dir, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	return found, nil
}
