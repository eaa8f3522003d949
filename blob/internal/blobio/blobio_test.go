package blobio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

func hexOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func verify(ctx context.Context, content, want string, size int64) (string, error) {
	v := NewVerifier(ctx, io.NopCloser(strings.NewReader(content)), blob.FormatDigest(want), want, size)
	b, err := io.ReadAll(v)
	return string(b), err
}

func TestVerifier(t *testing.T) {
	ctx := context.Background()
	const content = "skill content"
	if got, err := verify(ctx, content, hexOf(content), int64(len(content))); err != nil || got != content {
		t.Fatalf("intact content: %q, %v", got, err)
	}
	cases := []struct {
		name, content string
		size          int64
		want          string
	}{
		{"changed", "skill contenT", int64(len(content)), "hashes to"},
		{"truncated", content[:5], int64(len(content)), "read 5 bytes, stored size is 13"},
		{"overrun", content + "!!", int64(len(content)), "more than the stored size"},
	}
	for _, c := range cases {
		_, err := verify(ctx, c.content, hexOf(content), c.size)
		if !errors.Is(err, blob.ErrIntegrity) || skilld.ErrorCode(err) != skilld.EINTEGRITY || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want EINTEGRITY integrity error containing %q", c.name, err, c.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := verify(cctx, content, hexOf(content), int64(len(content))); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v, want context.Canceled", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestCopy(t *testing.T) {
	var sb strings.Builder
	h, n, err := Copy(context.Background(), &sb, strings.NewReader("abc"))
	if err != nil || h != hexOf("abc") || n != 3 || sb.String() != "abc" {
		t.Fatalf("Copy = %q, %d, %v", h, n, err)
	}
	// A failing destination comes back untyped, for the driver to wrap.
	_, _, err = Copy(context.Background(), failWriter{}, strings.NewReader("abc"))
	var se *skilld.Error
	if err == nil || errors.As(err, &se) {
		t.Fatalf("write failure = %v, want an untyped error", err)
	}
}
