package s3blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/blobtest"
)

func TestConformance(t *testing.T) {
	server.Require(t) // one skip message instead of one per subtest
	open := func(t *testing.T) blob.Store { return newStore(t, testConfig(t)) }
	blobtest.Run(t, open, blobtest.Options{
		Corrupt: func(t *testing.T, bs blob.Store, digest string) {
			s := bs.(*Store)
			key := s.key(strings.TrimPrefix(digest, blob.DigestPrefix))
			ctx := context.Background()
			obj, _, _, err := s.core.GetObject(ctx, s.cfg.Bucket, key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(obj)
			obj.Close()
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x01
			// Overwrite behind the store's back with the raw client.
			if _, err := s.core.Client.PutObject(ctx, s.cfg.Bucket, key, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		TempFiles: func(t *testing.T, bs blob.Store) []string {
			entries, err := os.ReadDir(bs.(*Store).cfg.TempDir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			return names
		},
	})
}

// TestServerVerifiesUpload: the server itself refuses a body whose SHA-256
// differs from the one the PUT announces, the check Put relies on against
// damage in transit; the failure maps to ErrIntegrity.
func TestServerVerifiesUpload(t *testing.T) {
	s := newStore(t, testConfig(t))
	ctx := context.Background()
	good := digestHex("the real content")
	_, err := s.core.PutObject(ctx, s.cfg.Bucket, s.key(good), strings.NewReader("the real contenT"), 16, "", good,
		minio.PutObjectOptions{DisableContentSha256: true})
	if err == nil {
		t.Fatal("server accepted a body that does not match its x-amz-content-sha256")
	}
	mapped := s.mapError("put", blob.FormatDigest(good), err)
	if !errors.Is(mapped, blob.ErrIntegrity) || skilld.ErrorCode(mapped) != skilld.EINTEGRITY {
		t.Fatalf("mapped to %v (code %s), want EINTEGRITY wrapping ErrIntegrity", mapped, skilld.ErrorCode(mapped))
	}
	var er minio.ErrorResponse
	if errors.As(mapped, &er) {
		t.Fatal("a minio type leaked out of the package")
	}
	if _, err := s.Stat(ctx, blob.FormatDigest(good)); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("refused upload left an object: Stat = %v", err)
	}
}

// TestForeignKeysIgnored: objects under the prefix that are not blobs in
// their place do not show in List.
func TestForeignKeysIgnored(t *testing.T) {
	s := newStore(t, testConfig(t))
	ctx := context.Background()
	info, err := s.Put(ctx, strings.NewReader("real"))
	if err != nil {
		t.Fatal(err)
	}
	h := strings.TrimPrefix(info.Digest, blob.DigestPrefix)
	foreign := []string{s.key(h) + ".bak", s.keyBase + "00/" + h, s.keyBase + "README", s.keyBase + h[:2] + "/x/" + h}
	for _, k := range foreign {
		if _, err := s.core.Client.PutObject(ctx, s.cfg.Bucket, k, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, k := range foreign {
			s.core.RemoveObject(context.Background(), s.cfg.Bucket, k, minio.RemoveObjectOptions{})
		}
	})
	var got []string
	for i, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, i.Digest)
	}
	if len(got) != 1 || got[0] != info.Digest {
		t.Fatalf("List = %v, want only %s", got, info.Digest)
	}
}

// TestNewFailsClearly: a missing bucket or wrong credentials fail New with
// a message that says so, and never as "not found".
func TestNewFailsClearly(t *testing.T) {
	cfg := testConfig(t)
	ctx := context.Background()

	missing := cfg
	missing.Bucket = "no-such-bucket-skilld"
	_, err := New(ctx, missing)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "no-such-bucket-skilld") {
		t.Fatalf("missing bucket: %v (code %s), want EUNAVAILABLE naming the bucket", err, skilld.ErrorCode(err))
	}

	wrong := cfg
	wrong.SecretKey = "not-the-secret"
	_, err = New(ctx, wrong)
	if skilld.ErrorCode(err) != skilld.EINTERNAL || !strings.Contains(err.Error(), "refused access") {
		t.Fatalf("wrong secret: %v (code %s), want EINTERNAL refused access", err, skilld.ErrorCode(err))
	}
	if strings.Contains(err.Error(), "not-the-secret") {
		t.Fatal("error message contains the secret key")
	}
}

// digestHex is the hex SHA-256 of s, the part of its digest keys are made of.
func digestHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestRePutHealsTruncatedObject: an object of the wrong size under a
// digest's key is replaced by the next Put of the content.
func TestRePutHealsTruncatedObject(t *testing.T) {
	s := newStore(t, testConfig(t))
	ctx := context.Background()
	content := strings.Repeat("skill ", 1000)
	info, err := s.Put(ctx, strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	key := s.key(strings.TrimPrefix(info.Digest, blob.DigestPrefix))
	if _, err := s.core.Client.PutObject(ctx, s.cfg.Bucket, key, strings.NewReader("skill"), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, strings.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Open(ctx, info.Digest)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if got, err := io.ReadAll(rc); err != nil || string(got) != content {
		t.Fatalf("after re-Put: %d bytes, %v", len(got), err)
	}
}
