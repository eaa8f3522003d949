package fsblob

import (
	"context"
	"errors"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/internal/blobio"
)

// List walks the fan-out directories in name order, which is digest order
// because each level is the next two hex digits of the digest. It descends
// only into directories the prefix can match, and skips anything that is not
// a blob in its proper place (editor backups, files copied in by hand).
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		hexPrefix, err := blob.ParsePrefix(prefix)
		if err != nil {
			yield(blob.Info{}, err)
			return
		}
		// fan holds the hex digits named by the directories above dir: ""
		// at the top, two digits one level down, four where the blobs are.
		var walk func(dir, fan string) bool
		walk = func(dir, fan string) bool {
			if err := ctx.Err(); err != nil {
				yield(blob.Info{}, blobio.ContextError("list", err))
				return false
			}
			entries, err := os.ReadDir(dir) // sorted by name
			if errors.Is(err, fs.ErrNotExist) {
				return true
			}
			if err != nil {
				yield(blob.Info{}, s.listError(err))
				return false
			}
			for _, e := range entries {
				name := e.Name()
				if len(fan) < 4 {
					if e.IsDir() && len(name) == 2 && blob.IsHex(name) && compatible(fan+name, hexPrefix) &&
						!walk(filepath.Join(dir, name), fan+name) {
						return false
					}
					continue
				}
				if !e.Type().IsRegular() || len(name) != blob.HexLen || !blob.IsHex(name) ||
					!strings.HasPrefix(name, fan) || !strings.HasPrefix(name, hexPrefix) {
					continue
				}
				fi, err := e.Info()
				if errors.Is(err, fs.ErrNotExist) {
					continue // deleted while we listed
				}
				if err != nil {
					yield(blob.Info{}, s.listError(err))
					return false
				}
				if !yield(blob.Info{Digest: blob.FormatDigest(name), Size: fi.Size(), ModTime: fi.ModTime()}, nil) {
					return false
				}
			}
			return true
		}
		walk(s.blobDir, "")
	}
}

// compatible reports whether the leading hex digits of a digest, fan, can
// begin a digest that starts with hexPrefix.
func compatible(fan, hexPrefix string) bool {
	n := min(len(fan), len(hexPrefix))
	return fan[:n] == hexPrefix[:n]
}

func (s *Store) listError(err error) error {
	return skilld.Errorf(skilld.EINTERNAL, "list blobs in %s: %w", s.root, err)
}
