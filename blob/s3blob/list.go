package s3blob

import (
	"context"
	"iter"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/skilld/skilld/blob"
)

// List lists the keys under the narrowest key prefix the digest prefix
// allows. S3 returns keys in byte order, which is digest order because the
// fan-out level is the digest's own first two digits. A failure mid-listing
// is retried from the last key seen, so no blob is yielded twice.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		hexPrefix, err := blob.ParsePrefix(prefix)
		if err != nil {
			yield(blob.Info{}, err)
			return
		}
		keyPrefix := s.keyBase + hexPrefix
		if len(hexPrefix) >= 2 {
			keyPrefix = s.key(hexPrefix) // keyBase + "ab/" + "ab…"
		}
		// Cancelling stops minio's paging when the consumer breaks early.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		startAfter, stopped := "", false
		err = s.retry(ctx, func(ctx context.Context) error {
			opts := minio.ListObjectsOptions{Prefix: keyPrefix, Recursive: true, StartAfter: startAfter}
			for obj := range s.core.ListObjectsIter(ctx, s.cfg.Bucket, opts) {
				if obj.Err != nil {
					return obj.Err
				}
				startAfter = obj.Key
				hexSum, ok := s.hexOf(obj.Key)
				if !ok {
					continue // not a blob of ours: ignore, as fsblob does
				}
				if !yield(blob.Info{Digest: blob.FormatDigest(hexSum), Size: obj.Size, ModTime: obj.LastModified}, nil) {
					stopped = true
					return nil
				}
			}
			return nil
		})
		if err != nil && !stopped {
			yield(blob.Info{}, s.mapError("list", "", err))
		}
	}
}

// hexOf returns the digest hex of a blob key, and false for any other key.
func (s *Store) hexOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, s.keyBase)
	if !ok || len(rest) != 3+blob.HexLen || rest[2] != '/' {
		return "", false
	}
	hexSum := rest[3:]
	if !blob.IsHex(hexSum) || rest[:2] != hexSum[:2] {
		return "", false
	}
	return hexSum, true
}
