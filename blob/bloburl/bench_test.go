package bloburl_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/bloburl"
)

const benchSize = 5 << 20

// benchStores opens each driver through its URL, so the benchmarks measure
// exactly what the server would use.
func benchStores(b *testing.B, run func(b *testing.B, s blob.Store)) {
	b.Run("fsblob", func(b *testing.B) {
		run(b, openBench(b, "file://"+filepath.Join(b.TempDir(), "blobs")))
	})
	b.Run("s3blob", func(b *testing.B) {
		srv := server.Require(b)
		b.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
		b.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
		run(b, openBench(b, srv.URL(srv.FreshPrefix(b))))
	})
}

func openBench(b *testing.B, url string) blob.Store {
	s, err := bloburl.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func benchContent() []byte {
	buf := make([]byte, benchSize)
	rand.NewChaCha8([32]byte{9}).Read(buf)
	return buf
}

// BenchmarkPut5MB stores a new 5 MB blob per iteration (the first 8 bytes
// count up, so no Put is an idempotent no-op) and deletes it untimed.
func BenchmarkPut5MB(b *testing.B) {
	benchStores(b, func(b *testing.B, s blob.Store) {
		ctx := context.Background()
		content := benchContent()
		b.SetBytes(benchSize)
		var i uint64
		for b.Loop() {
			i++
			binary.LittleEndian.PutUint64(content, i)
			info, err := s.Put(ctx, bytes.NewReader(content))
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := s.Delete(ctx, info.Digest); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

// BenchmarkOpen5MB opens a 5 MB blob and reads it to EOF, verifying it.
func BenchmarkOpen5MB(b *testing.B) {
	benchStores(b, func(b *testing.B, s blob.Store) {
		ctx := context.Background()
		info, err := s.Put(ctx, bytes.NewReader(benchContent()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Delete(context.Background(), info.Digest) })
		buf := make([]byte, 256<<10)
		// Hide io.Discard's ReadFrom, which would read in 8 KiB pieces.
		sink := struct{ io.Writer }{io.Discard}
		b.SetBytes(benchSize)
		for b.Loop() {
			rc, err := s.Open(ctx, info.Digest)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.CopyBuffer(sink, rc, buf)
			rc.Close()
			if err != nil || n != benchSize {
				b.Fatalf("read %d bytes: %v", n, err)
			}
		}
	})
}
