package s3blob

import (
	"context"
	"testing"
	"time"

	"github.com/skilld/skilld/blob/s3test"
)

// server is the S3 server of this test binary (see package s3test).
var server *s3test.Server

func TestMain(m *testing.M) { s3test.Main(m, &server) }

// testConfig is a Config for a fresh, empty prefix on the test server, with
// temp files in a per-test directory the test can inspect.
func testConfig(t *testing.T) Config {
	srv := server.Require(t)
	return Config{
		Bucket:    srv.Bucket,
		Prefix:    srv.FreshPrefix(t),
		Endpoint:  srv.Endpoint,
		Region:    srv.Region,
		AccessKey: srv.AccessKey,
		SecretKey: srv.SecretKey,
		TempDir:   t.TempDir(),
	}
}

// newStore opens a store on cfg and, at the end of the test, deletes what
// the test stored (a shared server must not fill up) and closes it. The
// cleanup goes to the server directly, since tests may point cfg at a proxy
// they have shut down.
func newStore(t *testing.T, cfg Config) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		s.Close()
		direct := cfg
		direct.Endpoint = server.Endpoint
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := New(ctx, direct)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer s.Close()
		for info, err := range s.List(ctx, "") {
			if err != nil {
				t.Errorf("cleanup: %v", err)
				break
			}
			if err := s.Delete(ctx, info.Digest); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return s
}
