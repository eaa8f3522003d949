package bloburl_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob/bloburl"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/blob/s3blob"
	"github.com/skilld/skilld/blob/s3test"
)

var server *s3test.Server

func TestMain(m *testing.M) { s3test.Main(m, &server) }

func TestOpenFile(t *testing.T) {
	root := filepath.Join(t.TempDir(), "blobs")
	s, err := bloburl.Open(context.Background(), "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*fsblob.Store); !ok {
		t.Fatalf("file URL opened a %T", s)
	}
	if _, err := s.Put(context.Background(), strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "sha256")); err != nil {
		t.Fatalf("store not created at the URL's path: %v", err)
	}
}

func TestOpenS3(t *testing.T) {
	srv := server.Require(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	s, err := bloburl.Open(context.Background(), srv.URL(srv.FreshPrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*s3blob.Store); !ok {
		t.Fatalf("s3 URL opened a %T", s)
	}
	info, err := s.Put(context.Background(), strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	s.Delete(context.Background(), info.Digest)
}

func TestOpenErrors(t *testing.T) {
	cases := []struct{ url, want string }{
		{"", "no scheme"},
		{"/var/lib/skilld", "no scheme"},
		{"relative/dir", "no scheme"},
		{"%zz", "not a URL"},
		{"mem://x", `unknown scheme "mem"`},
		{"C:\\blobs", `unknown scheme "c"`},
		{"file://server/share", `names host "server"`},
		{"file:relative", "relative path"},
		{"file://", "absolute path"},
		{"file:///tmp/x?sync=0", "only a path"},
		{"file://user:hunter2@localhost/tmp/x", "only a path"},
		{"s3://", "bucket name"},
		{"s3://bucket?nope=1", `unknown query parameter "nope"`},
	}
	for _, c := range cases {
		s, err := bloburl.Open(context.Background(), c.url)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", c.url)
			continue
		}
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q) = %v, want EINVALID containing %q", c.url, err, c.want)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q) leaks the password: %v", c.url, err)
		}
	}
}
