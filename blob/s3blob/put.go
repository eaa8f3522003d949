package s3blob

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/internal/blobio"
)

// Put copies r to a local temp file while hashing it (the digest, which is
// the key, is known only at the end, and S3 has no rename), then uploads
// that file in one PUT unless the object already exists intact.
// The PUT is signed over the SHA-256 of the body and carries it as
// x-amz-checksum-sha256, so the server refuses bytes damaged on the way.
// A single PUT (no multipart) makes the object appear whole or not at all.
func (s *Store) Put(ctx context.Context, r io.Reader) (blob.Info, error) {
	if err := ctx.Err(); err != nil {
		return blob.Info{}, blobio.ContextError("put", err)
	}
	f, err := os.CreateTemp(s.cfg.TempDir, tempPattern)
	if err != nil {
		return blob.Info{}, skilld.Errorf(skilld.EINTERNAL, "put: creating a temp file in %s: %w", s.cfg.TempDir, err)
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	// No fsync: the file only has to outlive this call, not a crash.
	hexSum, size, err := blobio.Copy(ctx, f, r)
	if err != nil {
		var se *skilld.Error
		if errors.As(err, &se) {
			return blob.Info{}, err
		}
		return blob.Info{}, skilld.Errorf(skilld.EINTERNAL, "put: writing temp file %s: %w", f.Name(), err)
	}
	digest := blob.FormatDigest(hexSum)
	key := s.key(hexSum)

	// Content-addressed: an object with this key and size holds these
	// bytes unless it was damaged since, so it is read back and checked;
	// only a damaged or missing object is uploaded (again).
	existing, err := s.stat(ctx, key)
	if err == nil && existing.Size == size {
		damaged, verr := blob.Verify(ctx, s, digest)
		if verr != nil {
			return blob.Info{}, verr
		}
		if damaged == nil {
			return blob.Info{Digest: digest, Size: size, ModTime: existing.LastModified}, nil
		}
	}
	if err != nil {
		if err := s.mapError("put", digest, err); !errors.Is(err, blob.ErrNotFound) {
			return blob.Info{}, err
		}
	}
	// Missing, or (after damage) of another size: upload, replacing it.

	sum, _ := hex.DecodeString(hexSum) // valid: we just encoded it
	opts := minio.PutObjectOptions{
		ContentType: "application/octet-stream",
		// Sign the body's SHA-256 we already have (passed as hexSum below)
		// instead of letting minio pick: over http it would hash the file
		// again for streaming-signature chunks, over https it would send
		// UNSIGNED-PAYLOAD, which the server cannot check.
		DisableContentSha256: true,
		UserMetadata:         map[string]string{"x-amz-checksum-sha256": base64.StdEncoding.EncodeToString(sum)},
	}
	var up minio.UploadInfo
	err = s.retry(ctx, func(ctx context.Context) (err error) {
		// A fresh SectionReader per attempt restarts the body at 0.
		up, err = s.core.PutObject(ctx, s.cfg.Bucket, key, io.NewSectionReader(f, 0, size), size, "", hexSum, opts)
		return err
	})
	if err != nil {
		return blob.Info{}, s.mapError("put", digest, err)
	}
	mod := up.LastModified
	if mod.IsZero() {
		// PUT responses rarely carry Last-Modified; the server's clock and
		// S3's one-second resolution make this an approximation of what a
		// later Stat reports, not worth another request.
		mod = time.Now().UTC().Truncate(time.Second)
	}
	return blob.Info{Digest: digest, Size: size, ModTime: mod}, nil
}
