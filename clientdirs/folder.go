package clientdirs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// This file reads and writes one skill folder on disk.

// tempPrefix starts the names of the folders a write or removal uses beside
// the skill's; a sync removes any left by an interrupted one.
const tempPrefix = ".skilld-"

// FolderDigest reads a skill folder the way skilld packs one (pack.ReadDir
// with the archive limits) and returns its package digest: the digest the
// server gave the same files. exists is false when there is no folder.
func FolderDigest(ctx context.Context, dir string) (digest string, exists bool, err error) {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if !info.IsDir() {
		return "", true, skilld.Errorf(skilld.EINVALID, "%s is not a folder", dir)
	}
	p, err := pack.ReadDir(ctx, dir, pack.ArchiveLimits())
	if err != nil {
		return "", true, err
	}
	return p.Digest(), true, nil
}

// WriteSkill writes pkg as the folder dir, replacing what is there: the
// files go into a new folder beside dir, which is then renamed into place,
// so dir never holds part of pkg. Executable files get mode 0755, others
// 0644 (less the umask).
func WriteSkill(ctx context.Context, dir string, pkg *pack.Package) error {
	parent, base := filepath.Split(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, tempPrefix+"new-"+base+"-")
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := writeFiles(ctx, tmp, pkg); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	old, err := moveAside(dir)
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir) // put the previous version back
		}
		os.RemoveAll(tmp)
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

func writeFiles(ctx context.Context, root string, pkg *pack.Package) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, f := range pkg.Files() {
		if err := ctx.Err(); err != nil {
			return err
		}
		// pack.New checked every path: relative, no "..", no backslash.
		name := filepath.FromSlash(f.Path)
		if d := filepath.Dir(name); d != "." {
			if err := r.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		mode := os.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := writeFile(r, name, f.Data, mode); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	return nil
}

func writeFile(r *os.Root, name string, data []byte, mode os.FileMode) error {
	fh, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = fh.Write(data)
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}

// RemoveSkill removes the folder dir: renamed aside first, so it vanishes
// at once, then deleted. A missing folder is not an error.
func RemoveSkill(dir string) error {
	old, err := moveAside(dir)
	if err != nil || old == "" {
		return err
	}
	return os.RemoveAll(old)
}

// moveAside renames dir to a fresh temporary name beside it and returns
// that name, or "" when there is no dir.
func moveAside(dir string) (string, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	parent, base := filepath.Split(filepath.Clean(dir))
	old := filepath.Join(parent, tempPrefix+"old-"+base+"-"+rand.Text())
	if err := os.Rename(dir, old); err != nil {
		return "", err
	}
	return old, nil
}

// CleanLeftovers removes what an interrupted write or removal left in a
// skills folder: the temporary folders beside skills. A missing folder has
// none.
func CleanLeftovers(skillsDir string) error {
	entries, err := os.ReadDir(skillsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() && (strings.HasPrefix(e.Name(), tempPrefix+"new-") || strings.HasPrefix(e.Name(), tempPrefix+"old-")) {
			errs = append(errs, os.RemoveAll(filepath.Join(skillsDir, e.Name())))
		}
	}
	return errors.Join(errs...)
}
