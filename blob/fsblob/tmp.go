package fsblob

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/skilld/skilld"
)

// StaleTempAge is how old a temp file must be before New removes it. A temp
// file belongs to a Put in progress (possibly in another process sharing the
// root) until it is this old; no sane upload of a skill package takes an
// hour, so an older one was left by a crash.
const StaleTempAge = time.Hour

// RemoveStaleTemp deletes temp files older than StaleTempAge, which
// crashed uploads left, and says how many (blob.TempCleaner).
func (s *Store) RemoveStaleTemp(context.Context) (int, error) {
	return s.removeStale()
}

// removeStaleTemp deletes temp files older than StaleTempAge.
func (s *Store) removeStaleTemp() error {
	_, err := s.removeStale()
	return err
}

func (s *Store) removeStale() (int, error) {
	n := 0
	entries, err := os.ReadDir(s.tmpDir)
	if err != nil {
		return 0, skilld.Errorf(skilld.EUNAVAILABLE, "blob store %s: reading %s: %w", s.root, s.tmpDir, err)
	}
	cutoff := time.Now().Add(-StaleTempAge)
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || fi.ModTime().After(cutoff) {
			continue // gone meanwhile, not ours, or still fresh
		}
		name := filepath.Join(s.tmpDir, e.Name())
		// Another process opening the same root may remove it first.
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, skilld.Errorf(skilld.EUNAVAILABLE, "blob store %s: removing stale temp file: %w", s.root, err)
		}
		n++
	}
	return n, nil
}
