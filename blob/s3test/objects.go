package s3test

import (
	"bytes"
	"net/url"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// client talks to the server directly, bypassing s3blob: what tests need
// to damage or lose a stored object behind the store's back.
func (s *Server) client(t testing.TB) *minio.Client {
	t.Helper()
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Secure:       u.Scheme == "https",
		Region:       s.Region,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// PutObject writes data at key in the test bucket, as a foreign writer (or
// a bit flip on the server's disk) would.
func (s *Server) PutObject(t testing.TB, key string, data []byte) {
	t.Helper()
	if _, err := s.client(t).PutObject(t.Context(), s.Bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("putting %s: %v", key, err)
	}
}

// RemoveObject deletes key from the test bucket.
func (s *Server) RemoveObject(t testing.TB, key string) {
	t.Helper()
	if err := s.client(t).RemoveObject(t.Context(), s.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("removing %s: %v", key, err)
	}
}
