package skillmd

import (
	"context"
	"io/fs"
	"path"
)

// Discover returns the skill directories under root in fsys, in lexical
// order: every directory holding a SKILL.md (or skill.md) file. It does not
// look inside a skill it found (a skill's own references may contain
// SKILL.md examples), nor inside the directories SkipDir names. Hidden
// directories are searched: .claude/skills, .agents/skills and the like are
// where agents read skills from. Root itself is returned when it is a skill.
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
	w := walker{
		// Lstat, as the listing would: a link named SKILL.md is not a
		// skill file.
		probe: func(p string) ([]byte, bool, error) {
			fi, err := fs.Lstat(fsys, p)
			return nil, err == nil && fi.Mode().IsRegular(), nil
		},
		readDir: func(dir string) ([]fs.DirEntry, error) { return fs.ReadDir(fsys, dir) },
	}
	loaded, err := w.walk(ctx, root)
	if err != nil {
		return nil, err
	}
	found := make([]Found, len(loaded))
	for i, l := range loaded {
		found[i] = l.Found
	}
	return found, nil
}

// SkipDir reports whether a directory of that name is left out of a search
// for skills: version-control metadata (.git, .hg, .svn) and installed
// dependencies (node_modules), which hold no skills to publish and can be
// huge.
func SkipDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", "node_modules":
		return true
	}
	return false
}

// walker is the walk Find and Load share. probe looks at dir/SKILL.md,
// the file most directories walked hold: one call says whether it is a
// regular file (and, for Load, reads it), where listing the directory
// costs several system calls. read, when set, reads a skill file the
// listing found.
type walker struct {
	probe   func(p string) (data []byte, regular bool, err error)
	readDir func(dir string) ([]fs.DirEntry, error)
	read    func(p string) ([]byte, error)
	found   []Loaded
}

func (w *walker) walk(ctx context.Context, dir string) ([]Loaded, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if data, ok, err := w.probe(path.Join(dir, "SKILL.md")); ok {
		w.found = append(w.found, Loaded{Found: Found{Dir: dir, File: "SKILL.md"}, Data: data, Err: err})
		return w.found, nil
	}
	entries, err := w.readDir(dir)
	if err != nil {
		return nil, err
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
		l := Loaded{Found: Found{Dir: dir, File: file}}
		if w.read != nil {
			l.Data, l.Err = w.read(l.Path())
		}
		w.found = append(w.found, l)
		return w.found, nil
	}
	for _, e := range entries {
		if !e.IsDir() || SkipDir(e.Name()) {
			continue
		}
		if _, err := w.walk(ctx, path.Join(dir, e.Name())); err != nil {
			return nil, err
		}
	}
	return w.found, nil
}
