package skillmd

import (
	"errors"
	"io/fs"
	"path"
)

// CheckDir checks the skill directory dir of fsys: it finds its SKILL.md
// (or skill.md), checks it, and requires the skill name to match the
// directory's name unless opts.Dir already says what to compare with. Use
// dir "." for the root of fsys, in which case only opts.Dir is compared.
func CheckDir(fsys fs.FS, dir string, opts Options) *Report {
	r := &Report{}
	info, err := fs.Stat(fsys, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.fail(FieldFile, "Path does not exist: %s", dir)
		return r
	case err != nil:
		r.fail(FieldFile, "Cannot read %s: %v", dir, err)
		return r
	case !info.IsDir():
		r.fail(FieldFile, "Not a directory: %s", dir)
		return r
	}
	name := Filename(func(name string) bool {
		fi, err := fs.Stat(fsys, path.Join(dir, name))
		return err == nil && fi.Mode().IsRegular()
	})
	if name == "" {
		r.fail(FieldFile, "Missing required file: SKILL.md")
		return r
	}
	data, err := fs.ReadFile(fsys, path.Join(dir, name))
	if err != nil {
		r.fail(FieldFile, "Cannot read %s: %v", path.Join(dir, name), err)
		return r
	}
	if opts.Dir == "" && dir != "." {
		opts.Dir = path.Base(dir)
	}
	return Check(data, opts)
}

// CheckFound checks a skill that Find found: one read of its skill file,
// and its name compared with its directory's unless opts.Dir says what to
// compare with.
func CheckFound(fsys fs.FS, f Found, opts Options) *Report {
	data, err := fs.ReadFile(fsys, f.Path())
	return CheckLoaded(Loaded{Found: f, Data: data, Err: err}, opts)
}
