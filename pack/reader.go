package pack

import (
	"io"
	"math"
	"strings"
)

// This file holds what the directory and archive readers share: name
// clean-up, the skip rules, top-folder stripping and bounded reading.

// trimDotSlash removes leading "./" from an archive entry name. `tar -C dir -cf
// x.tar .` writes every name that way; "./a" names the same file as "a", so
// accepting it is safe, while "a/./b" stays refused by CheckPath.
func trimDotSlash(name string) string {
	for strings.HasPrefix(name, "./") {
		name = name[2:]
	}
	return name
}

// skipped reports files that archivers add on macOS and that are never part
// of a skill: the __MACOSX folder and AppleDouble "._name" files. Other
// dot-files (.gitignore, .env.example) are kept.
func skipped(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	if first == "__MACOSX" {
		return true
	}
	return strings.HasPrefix(path[strings.LastIndexByte(path, '/')+1:], "._")
}

// finish turns what a reader collected into a package. With strip, a single
// top folder holding every file is removed (archives are usually made of a
// folder, the skill is its content) and kept as TopDir.
func finish(files []File, lim Limits, strip bool) (*Package, error) {
	var top string
	if strip {
		top = commonTop(files)
		if top != "" {
			for i := range files {
				files[i].Path = files[i].Path[len(top)+1:]
			}
		}
	}
	p, err := New(files, lim)
	if err != nil {
		return nil, err
	}
	p.topDir = top
	return p, nil
}

// commonTop returns the first segment shared by every path when no path sits
// at the top level, else "".
func commonTop(files []File) string {
	if len(files) == 0 {
		return ""
	}
	top, _, ok := strings.Cut(files[0].Path, "/")
	if !ok {
		return ""
	}
	for _, f := range files[1:] {
		if !strings.HasPrefix(f.Path, top) || len(f.Path) <= len(top) || f.Path[len(top)] != '/' {
			return ""
		}
	}
	return top
}

// maxPrealloc caps the memory reserved up front from a declared size. With
// limits in force declared sizes are already bounded; without limits a header
// claiming gigabytes must not allocate them before any byte arrives.
const maxPrealloc = 16 << 20

// readBounded reads r to EOF, expecting want bytes. It never reads more than
// want+1 bytes, so a header that understates the size costs one byte of
// over-read, not the whole stream; the caller compares len(data) with want.
func readBounded(r io.Reader, want int64) ([]byte, error) {
	want = min(want, math.MaxInt64-1)
	lr := io.LimitReader(r, want+1)
	buf := make([]byte, 0, min(want+1, maxPrealloc))
	for {
		if int64(len(buf)) > want {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
