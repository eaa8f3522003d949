// Package fsblob stores blobs as files in a directory tree:
//
//	<root>/sha256/ab/cd/abcd…(64 hex)   one read-only file per blob
//	<root>/tmp/put-*                    uploads in progress
//
// The two fan-out levels keep directories small (65,536 leaves hold tens of
// millions of blobs at a few hundred entries each). Put writes to tmp/ on
// the same file system and links the finished, fsynced file into place, so a
// crash leaves at most a temp file, which New removes once it is old.
package fsblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/internal/blobio"
	"github.com/skilld/skilld/internal/exhaust"
)

// File and directory modes. Blobs are immutable, so their files are
// read-only, which also stops a stray process from editing one in place;
// nothing here is meant for other users.
const (
	dirMode  fs.FileMode = 0o750
	blobMode fs.FileMode = 0o440
)

// Store is a blob.Store on a local file system. It holds no state besides
// its paths, so several Stores (or processes) may share one root.
type Store struct {
	root    string // absolute
	blobDir string // <root>/sha256
	tmpDir  string // <root>/tmp
}

var _ blob.Store = (*Store)(nil)

// New opens the store rooted at root, creating the directories it needs, and
// removes temp files left by uploads that crashed more than StaleTempAge ago.
func New(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "blob store root %q: %w", root, err)
	}
	s := &Store{root: abs, blobDir: filepath.Join(abs, blob.Algorithm), tmpDir: filepath.Join(abs, "tmp")}
	for _, dir := range []string{s.blobDir, s.tmpDir} {
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return nil, skilld.Errorf(skilld.EUNAVAILABLE, "blob store %s: creating %s: %w", abs, dir, err)
		}
	}
	if err := s.removeStaleTemp(); err != nil {
		return nil, err
	}
	return s, nil
}

// Root returns the absolute root directory of the store.
func (s *Store) Root() string { return s.root }

// path returns the file that holds (or would hold) the blob with the given
// hex digest. Callers must have validated hexSum with blob.ParseDigest.
func (s *Store) path(hexSum string) string {
	return filepath.Join(s.blobDir, hexSum[0:2], hexSum[2:4], hexSum)
}

// Open returns a reader over the blob that verifies it while reading.
func (s *Store) Open(ctx context.Context, digest string) (io.ReadCloser, error) {
	hexSum, err := blob.ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, blobio.ContextError("open "+digest, err)
	}
	f, err := os.Open(s.path(hexSum))
	if err != nil {
		return nil, s.fileError("open", digest, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, s.fileError("open", digest, err)
	}
	return blobio.NewVerifier(ctx, f, digest, hexSum, fi.Size()), nil
}

// Stat describes the blob from its file's metadata.
func (s *Store) Stat(ctx context.Context, digest string) (blob.Info, error) {
	hexSum, err := blob.ParseDigest(digest)
	if err != nil {
		return blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, blobio.ContextError("stat "+digest, err)
	}
	fi, err := os.Stat(s.path(hexSum))
	if err != nil {
		return blob.Info{}, s.fileError("stat", digest, err)
	}
	return blob.Info{Digest: digest, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete removes the blob's file. The fan-out directories stay: they are
// few, bounded in number, and removing them would race with a concurrent
// Put that is about to link a file into one.
func (s *Store) Delete(ctx context.Context, digest string) error {
	hexSum, err := blob.ParseDigest(digest)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return blobio.ContextError("delete "+digest, err)
	}
	if err := os.Remove(s.path(hexSum)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.fileError("delete", digest, err)
	}
	return nil
}

// Close does nothing: the store holds no open files between calls.
func (s *Store) Close() error { return nil }

// fileError maps a file system error on a blob to the blob error kinds.
func (s *Store) fileError(op, digest string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return blobio.NotFound(digest, err)
	}
	if exhaust.Of(err) != "" {
		return exhaust.Unavailable(err, "the blob store")
	}
	return &skilld.Error{
		Code:    skilld.EINTERNAL,
		Message: fmt.Sprintf("%s blob %s in %s: %v", op, digest, s.root, err),
		Err:     err,
	}
}
