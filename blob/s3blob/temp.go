package s3blob

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tempPattern names Put's local copies in Config.TempDir.
const tempPattern = "skilld-s3put-*"

// staleTempAge matches fsblob.StaleTempAge: a copy this old belongs to a
// process that crashed mid-Put, not to an upload still running.
const staleTempAge = time.Hour

// RemoveStaleTemp deletes Put copies that crashed processes left in the
// temp directory, and says how many (blob.TempCleaner).
func (s *Store) RemoveStaleTemp(context.Context) (int, error) {
	return removeStaleTemp(s.cfg.TempDir), nil
}

// removeStaleTemp deletes Put copies left in dir by crashed processes. It
// only touches files named by tempPattern, because dir is often the shared
// system temp directory; failures are ignored, as the files are only waste.
func removeStaleTemp(dir string) int {
	n := 0
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	prefix := strings.TrimSuffix(tempPattern, "*")
	cutoff := time.Now().Add(-staleTempAge)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) && os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}
