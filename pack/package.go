// Package pack holds skill packages: immutable sets of files (relative slash
// paths, bytes, an executable bit) with a content address computed from a
// canonical manifest, and the readers that build them from directories and
// archives without ever writing to disk.
//
// Every path goes through CheckPath and the collision rules of New, and every
// reader enforces Limits from declared sizes before reading data and again
// from the bytes actually produced, so hostile archives (path traversal,
// links, decompression bombs, lying headers) are refused as a whole.
package pack

import (
	"slices"
	"strings"
)

// File is one file of a package. Path is relative and slash-separated; Exec
// records whether any execute bit was set where the file came from.
type File struct {
	Path string
	Data []byte
	Exec bool
}

// Entry describes a file without its bytes: what the manifest records.
// Digest is "sha256:<hex>" of the file's bytes.
type Entry struct {
	Path   string
	Size   int64
	Digest string
	Exec   bool
}

// Package is an immutable, validated set of files. Its zero value is not
// usable; build one with New or a reader.
type Package struct {
	files    []File // sorted by Path, byte order
	entries  []Entry
	manifest []byte
	digest   string
	size     int64
	topDir   string
}

// New validates files against CheckPath, the collision rules and lim, and
// returns them as a package sorted by path. One bad file refuses the whole
// package; the error names it.
//
// New copies the slice of files but not their Data: the package takes over
// the byte slices, and the caller must not change them afterwards. Copying
// would double the memory of every upload for no safety the caller cannot
// already provide.
func New(files []File, lim Limits) (*Package, error) {
	if lim.MaxFiles > 0 && len(files) > lim.MaxFiles {
		return nil, errTooManyFiles(lim.MaxFiles)
	}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Path, b.Path) })

	var total int64
	paths := make([]string, len(sorted))
	for i, f := range sorted {
		if err := CheckPath(f.Path); err != nil {
			return nil, err
		}
		if lim.MaxPathLen > 0 && len(f.Path) > lim.MaxPathLen {
			return nil, pathErr(ErrUnsafePath, f.Path, "is %d bytes long, over the %d-byte limit", len(f.Path), lim.MaxPathLen)
		}
		if d := depth(f.Path); lim.MaxDepth > 0 && d > lim.MaxDepth {
			return nil, pathErr(ErrUnsafePath, f.Path, "is %d levels deep, over the limit of %d", d, lim.MaxDepth)
		}
		size := int64(len(f.Data))
		if lim.MaxFileSize > 0 && size > lim.MaxFileSize {
			return nil, errFileTooLarge(f.Path, size, lim.MaxFileSize)
		}
		total += size
		if lim.MaxTotalSize > 0 && total > lim.MaxTotalSize {
			return nil, errTooLarge(lim.MaxTotalSize)
		}
		paths[i] = f.Path
	}
	if err := checkCollisions(paths); err != nil {
		return nil, err
	}

	entries := make([]Entry, len(sorted))
	for i, f := range sorted {
		entries[i] = Entry{Path: f.Path, Size: int64(len(f.Data)), Digest: digestOf(f.Data), Exec: f.Exec}
	}
	manifest, digest := BuildManifest(entries)
	return &Package{
		files:    sorted,
		entries:  entries,
		manifest: manifest,
		digest:   digest,
		size:     total,
	}, nil
}

// Digest is the content address of the package: "sha256:" and the lowercase
// hex SHA-256 of Manifest(). Same paths, bytes and exec bits give the same
// digest whatever the source or order.
func (p *Package) Digest() string { return p.digest }

// Manifest returns a copy of the canonical manifest (docs/PACKAGE-FORMAT.md).
func (p *Package) Manifest() []byte { return slices.Clone(p.manifest) }

// Files returns the files sorted by path in byte order. The slice is a copy;
// the Data slices are shared and must not be modified.
func (p *Package) Files() []File { return slices.Clone(p.files) }

// File returns the file at exactly path (no folding or normalization).
func (p *Package) File(path string) (File, bool) {
	i, ok := slices.BinarySearchFunc(p.files, path, func(f File, path string) int {
		return strings.Compare(f.Path, path)
	})
	if !ok {
		return File{}, false
	}
	return p.files[i], true
}

// Entries returns the manifest entries sorted by path.
func (p *Package) Entries() []Entry { return slices.Clone(p.entries) }

// Size is the total number of bytes of all files.
func (p *Package) Size() int64 { return p.size }

// Len is the number of files.
func (p *Package) Len() int { return len(p.files) }

// TopDir is the single top folder a reader stripped from every path, or ""
// if none was. It is provenance for display only: it is not part of the
// digest, so repacking the same files under another folder name keeps the
// content address.
func (p *Package) TopDir() string { return p.topDir }
