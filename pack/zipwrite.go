package pack

import (
	"archive/zip"
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"
)

// zipEpoch is the modification time of every entry WriteZip writes: the
// earliest time a zip's MS-DOS date can hold, so no clock leaks into the
// bytes.
func zipEpoch() time.Time { return time.Date(1980, time.January, 1, 0, 0, 0, 0, time.UTC) }

// WriteZip writes files as a zip archive whose bytes depend on the files
// alone: entries sorted by path at the archive root (no wrapper folder and
// no folder entries), a fixed timestamp, mode 0644 (0755 for executables),
// Deflate at its default level, no comment. The same package therefore always
// gives the same archive, and its SHA-256 can be published ahead of a
// download (Agent Skills discovery, "digest" of an "archive"). The bytes are
// stable for a given build of skilld; a Go release that changes
// compress/flate's output would change them, never their contents.
func WriteZip(w io.Writer, files []File) error {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	zw := zip.NewWriter(w)
	for i, f := range sorted {
		if i > 0 && sorted[i-1].Path == f.Path {
			return fmt.Errorf("zip: %q: %w", f.Path, ErrPathCollision)
		}
		h := &zip.FileHeader{Name: f.Path, Method: zip.Deflate, Modified: zipEpoch()}
		h.SetMode(0o644)
		if f.Exec {
			h.SetMode(0o755)
		}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("zip: %q: %w", f.Path, err)
		}
		if _, err := fw.Write(f.Data); err != nil {
			return fmt.Errorf("zip: %q: %w", f.Path, err)
		}
	}
	return zw.Close()
}
