package s3blob

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var awsEnv = env(map[string]string{"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_SESSION_TOKEN": "TOK"})

func TestParseURL(t *testing.T) {
	cfg, err := ParseURL("s3://my-bucket/team/blobs/?endpoint=http://127.0.0.1:7070&region=eu-west-1", awsEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Bucket != "my-bucket" || cfg.Prefix != "team/blobs" || cfg.Endpoint != "http://127.0.0.1:7070" ||
		cfg.Region != "eu-west-1" || cfg.AccessKey != "AK" || cfg.SecretKey != "SK" || cfg.SessionToken != "TOK" {
		t.Fatalf("cfg = %+v", cfg)
	}

	cfg, err = ParseURL("s3://my-bucket", awsEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Prefix != "" || cfg.Endpoint != DefaultEndpoint || cfg.Region != DefaultRegion || cfg.TempDir == "" {
		t.Fatalf("defaults not applied: %+v", cfg)
	}

	// SKILLD_S3_* win over AWS_* when both keys are set.
	both := env(map[string]string{"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK",
		"SKILLD_S3_ACCESS_KEY": "SAK", "SKILLD_S3_SECRET_KEY": "SSK"})
	if cfg, err = ParseURL("s3://my-bucket", both); err != nil || cfg.AccessKey != "SAK" || cfg.SecretKey != "SSK" {
		t.Fatalf("SKILLD_S3_* credentials: %+v, %v", cfg, err)
	}
}

func TestParseURLErrors(t *testing.T) {
	cases := []struct{ url, want string }{
		{"s3://", "bucket name"},
		{"s3://Bucket", "lowercase"},
		{"s3://b", "3 to 63"},
		{"s3://my-bucket:99/x", "lowercase"},
		{"file:///tmp", "scheme must be s3"},
		{"s3://AKIA:secret@my-bucket/x", "credentials do not belong"},
		{"s3://my-bucket/a//b", "segment"},
		{"s3://my-bucket/a/../b", "segment"},
		{"s3://my-bucket?endpiont=http://x", `unknown query parameter "endpiont"`},
		{"s3://my-bucket?region=a&region=b", "2 times"},
		{"s3://my-bucket?endpoint=ftp://x", "http:// or https://"},
		{"s3://my-bucket?endpoint=http://x/path", "only scheme, host and port"},
		{"s3://my-bucket?endpoint=127.0.0.1:7070", "http:// or https://"},
		{"s3://my-bucket#frag", "fragment"},
		{"s3:opaque", "want s3://"},
		{"%zz", "not a URL"},
	}
	for _, c := range cases {
		_, err := ParseURL(c.url, awsEnv)
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseURL(%q) = %v, want EINVALID containing %q", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") && strings.Contains(c.url, "secret") {
			t.Errorf("ParseURL(%q) leaks the secret: %v", c.url, err)
		}
	}
	_, err := ParseURL("s3://my-bucket", env(nil))
	if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("no credentials: %v, want EINVALID naming the variables", err)
	}
}

// TestStaleTempRemoved: New-time cleanup removes only old files of ours.
func TestStaleTempRemoved(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-staleTempAge - time.Minute)
	files := map[string]bool{ // name: should survive
		"skilld-s3put-1": false, "skilld-s3put-2": true, "someone-elses": true,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if name != "skilld-s3put-2" { // the fresh one of ours
			os.Chtimes(p, old, old)
		}
	}
	removeStaleTemp(dir)
	for name, survives := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if survives != (err == nil) {
			t.Errorf("%s: survives=%v, want %v", name, err == nil, survives)
		}
	}
}
