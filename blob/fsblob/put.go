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

// Put writes r to a temp file while hashing it, makes the file durable, then
// links it under its digest. Linking (not renaming) means an existing blob is
// never replaced: concurrent Puts of the same content all succeed and the
// first one's file stays. The temp file is removed whatever happens.
func (s *Store) Put(ctx context.Context, r io.Reader) (blob.Info, error) {
	if err := ctx.Err(); err != nil {
		return blob.Info{}, blobio.ContextError("put", err)
	}
	f, err := os.CreateTemp(s.tmpDir, "put-*")
	if err != nil {
		return blob.Info{}, s.putError("creating a temp file", err)
	}
	tmp := f.Name()
	defer func() {
		if f != nil {
			f.Close()
		}
		os.Remove(tmp) // after a successful link the name is just a second link
	}()

	hexSum, _, err := blobio.Copy(ctx, f, r)
	if err != nil {
		var se *skilld.Error
		if errors.As(err, &se) {
			return blob.Info{}, err
		}
		return blob.Info{}, s.putError("writing "+tmp, err)
	}
	// Make the bytes durable before the name is: after a crash the digest
	// must never name a file with missing content.
	if err := f.Chmod(blobMode); err != nil {
		return blob.Info{}, s.putError("chmod "+tmp, err)
	}
	if err := f.Sync(); err != nil {
		return blob.Info{}, s.putError("fsync "+tmp, err)
	}
	closeErr := f.Close()
	f = nil
	if closeErr != nil {
		return blob.Info{}, s.putError("closing "+tmp, closeErr)
	}

	digest := blob.FormatDigest(hexSum)
	final := s.path(hexSum)
	if err := s.install(tmp, final); err != nil {
		return blob.Info{}, s.putError("storing "+digest, err)
	}
	fi, err := os.Stat(final)
	if err != nil {
		return blob.Info{}, s.fileError("put", digest, err)
	}
	return blob.Info{Digest: digest, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// install gives the finished temp file its final name and makes that name
// durable.
func (s *Store) install(tmp, final string) error {
	dir := filepath.Dir(final)
	if err := mkdirDurable(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := mkdirDurable(dir); err != nil {
		return err
	}
	err := os.Link(tmp, final)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		// Already stored, by an earlier or a concurrent Put. Same digest
		// means same content, unless the stored file was damaged since
		// (truncated, grown, or a byte changed: it is read back and
		// checked); then the new file replaces it, which heals it
		// atomically. The directory is synced below even when nothing
		// changed, so that this Put does not report success before the
		// concurrent one that linked the file has made the name durable.
		intact, err := s.intact(final, tmp)
		if err != nil {
			return err
		}
		if !intact {
			if err := os.Rename(tmp, final); err != nil {
				return err
			}
		}
	default:
		// Some file systems (certain FUSE and network mounts) have no hard
		// links; rename is atomic too, it just replaces an existing blob
		// with identical bytes instead of keeping it.
		if rerr := os.Rename(tmp, final); rerr != nil {
			return fmt.Errorf("link: %v; rename: %w", err, rerr)
		}
	}
	return syncDir(dir)
}

// mkdirDurable creates dir if it is missing and, when it did, fsyncs the
// parent so the new entry survives a crash along with the blob in it.
func mkdirDurable(dir string) error {
	err := os.Mkdir(dir, dirMode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// syncDir fsyncs a directory, which is what makes a new name in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) putError(what string, err error) error {
	if exhaust.Of(err) != "" {
		return exhaust.Unavailable(err, "the blob store")
	}
	return &skilld.Error{
		Code:    skilld.EINTERNAL,
		Message: fmt.Sprintf("put into blob store %s: %s: %v", s.root, what, err),
		Err:     err,
	}
}

// intact reports whether the stored file final holds the same bytes as the
// fresh upload tmp: same size, and a hash of final's content matching its
// name.
func (s *Store) intact(final, tmp string) (bool, error) {
	old, serr := os.Stat(final)
	tfi, terr := os.Stat(tmp)
	if serr != nil || terr != nil {
		return false, errors.Join(serr, terr)
	}
	if old.Size() != tfi.Size() {
		return false, nil
	}
	f, err := os.Open(final)
	if err != nil {
		return false, err
	}
	defer f.Close()
	hexSum := filepath.Base(final)
	v := blobio.NewVerifier(context.Background(), f, blob.FormatDigest(hexSum), hexSum, old.Size())
	if _, err := io.Copy(io.Discard, v); err != nil {
		if errors.Is(err, blob.ErrIntegrity) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
