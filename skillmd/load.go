package skillmd

import (
	"context"
	"os"
	"path"
	"path/filepath"
)

// Loaded is a skill Load found, with the content of its skill file, or
// Err when the file could not be read.
type Loaded struct {
	Found
	Data []byte
	Err  error
}

// Load is Find over a directory of the operating system that also reads
// every skill file, for callers that check or load all the skills of a
// folder: the skills Find would find, in the same order, with their
// directories relative to root ("." for root itself). Where the system
// allows it, a skill costs one open (which refuses a link or a non-regular
// file, as Find's Lstat does), one stat and one read; Find and then
// reading each file costs three more system calls a skill.
func Load(ctx context.Context, root string) ([]Loaded, error) {
	r, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.close()
	w := walker{
		probe: r.read,
		readDir: func(dir string) ([]os.DirEntry, error) {
			return os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		},
		read: func(p string) ([]byte, error) {
			data, _, err := r.read(p)
			return data, err
		},
	}
	return w.walk(ctx, ".")
}

// CheckLoaded checks a skill Load read, as CheckFound does.
func CheckLoaded(l Loaded, opts Options) *Report {
	if l.Err != nil {
		r := &Report{}
		r.fail(FieldFile, "Cannot read %s: %v", l.Path(), l.Err)
		return r
	}
	if opts.Dir == "" && l.Dir != "." {
		opts.Dir = path.Base(l.Dir)
	}
	return Check(l.Data, opts)
}
