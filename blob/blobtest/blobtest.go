// Package blobtest is the conformance suite every blob.Store driver must
// pass. A driver's tests call Run with a function that opens a fresh, empty
// store; the suite checks the whole blob.Store contract against it, including
// atomicity under cancellation, concurrency, integrity checking and bounded
// memory on large blobs.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

// Options are the driver hooks some tests need; a nil hook skips its test
// (with a note in the log), so a new driver can start without them.
type Options struct {
	// Corrupt changes the stored bytes of the blob behind the store's back,
	// keeping its length (flip one byte), so that reading it must fail the
	// integrity check.
	Corrupt func(t *testing.T, s blob.Store, digest string)
	// TempFiles lists the temp files the driver holds for uploads in
	// progress; after a failed or cancelled Put there must be none left.
	TempFiles func(t *testing.T, s blob.Store) []string
}

// Run runs the suite. open must return a new, empty store for each call and
// arrange (with t.Cleanup) to close it and remove what it stored.
func Run(t *testing.T, open func(t *testing.T) blob.Store, opts Options) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, open(t)) })
	t.Run("IdempotentPut", func(t *testing.T) { testIdempotentPut(t, open(t)) })
	t.Run("NotFound", func(t *testing.T) { testNotFound(t, open(t)) })
	t.Run("InvalidDigest", func(t *testing.T) { testInvalidDigest(t, open(t)) })
	t.Run("List", func(t *testing.T) { testList(t, open(t)) })
	t.Run("Integrity", func(t *testing.T) {
		if opts.Corrupt == nil {
			t.Skip("driver has no Corrupt hook")
		}
		testIntegrity(t, open(t), opts.Corrupt)
	})
	t.Run("PutHeals", func(t *testing.T) {
		if opts.Corrupt == nil {
			t.Skip("driver has no Corrupt hook")
		}
		testPutHeals(t, open(t), opts.Corrupt)
	})
	t.Run("Check", func(t *testing.T) {
		if opts.Corrupt == nil {
			t.Skip("driver has no Corrupt hook")
		}
		testCheck(t, open(t), opts.Corrupt)
	})
	t.Run("ConcurrentPut", func(t *testing.T) { testConcurrentPut(t, open(t)) })
	t.Run("Large", func(t *testing.T) { testLarge(t, open(t)) })
	t.Run("CancelledPut", func(t *testing.T) { testCancelledPut(t, open(t), opts.TempFiles) })
	t.Run("FailingReader", func(t *testing.T) { testFailingReader(t, open(t), opts.TempFiles) })
}

// digestOf is the expected digest of content.
func digestOf(content []byte) string {
	sum := sha256.Sum256(content)
	return blob.FormatDigest(hex.EncodeToString(sum[:]))
}

// put stores content and checks the returned Info.
func put(t *testing.T, s blob.Store, content []byte) blob.Info {
	t.Helper()
	info, err := s.Put(context.Background(), bytes.NewReader(content))
	if err != nil {
		t.Fatalf("Put(%d bytes): %v", len(content), err)
	}
	if want := digestOf(content); info.Digest != want {
		t.Fatalf("Put digest = %s, want %s", info.Digest, want)
	}
	if info.Size != int64(len(content)) {
		t.Fatalf("Put size = %d, want %d", info.Size, len(content))
	}
	if info.ModTime.IsZero() {
		t.Fatalf("Put of %s returned a zero ModTime", info.Digest)
	}
	return info
}

// readAll opens digest and reads it to EOF, returning the read error.
func readAll(t *testing.T, s blob.Store, digest string) ([]byte, error) {
	t.Helper()
	rc, err := s.Open(context.Background(), digest)
	if err != nil {
		t.Fatalf("Open(%s): %v", digest, err)
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// wantError checks that err is a *skilld.Error with code, wrapping sentinel
// (if not nil), whose message mentions mention (if not "").
func wantError(t *testing.T, what string, err error, code string, sentinel error, mention string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, code)
	}
	var se *skilld.Error
	if !errors.As(err, &se) {
		t.Fatalf("%s: error %v (%T) is not a *skilld.Error", what, err, err)
	}
	if se.Code != code {
		t.Fatalf("%s: code %q, want %q (error: %v)", what, se.Code, code, err)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Fatalf("%s: error %v does not wrap %v", what, err, sentinel)
	}
	if mention != "" && !bytes.Contains([]byte(err.Error()), []byte(mention)) {
		t.Fatalf("%s: error %q does not mention %q", what, err, mention)
	}
}

// listAll collects a listing, failing t on any error.
func listAll(t *testing.T, s blob.Store, prefix string) []blob.Info {
	t.Helper()
	var out []blob.Info
	for info, err := range s.List(context.Background(), prefix) {
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		out = append(out, info)
	}
	return out
}
