package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

// Sizes of the large-blob test. The memory bound is generous (buffers,
// the HTTP stack, the race detector's allocations) yet far below the blob,
// so a driver that holds the whole content in memory fails.
const (
	largeSize      = 50 << 20
	largeHeapBound = 20 << 20
)

func testConcurrentPut(t *testing.T, s blob.Store) {
	content := randomBytes(4, 256<<10)
	want := digestOf(content)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	infos := make([]blob.Info, n)
	for i := range n {
		wg.Go(func() {
			infos[i], errs[i] = s.Put(context.Background(), bytes.NewReader(content))
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent Put %d: %v", i, errs[i])
		}
		if infos[i].Digest != want || infos[i].Size != int64(len(content)) {
			t.Fatalf("concurrent Put %d = %+v, want %s", i, infos[i], want)
		}
	}
	if got := listAll(t, s, ""); len(got) != 1 || got[0].Digest != want {
		t.Fatalf("after %d concurrent Puts List = %v, want just %s", n, got, want)
	}
	got, err := readAll(t, s, want)
	if err != nil || len(got) != len(content) {
		t.Fatalf("reading the concurrently stored blob: %d bytes, %v", len(got), err)
	}
}

func testLarge(t *testing.T, s blob.Store) {
	want := generatedDigest(5, largeSize)
	ctx := context.Background()

	w := watchHeap()
	info, err := s.Put(ctx, newGenerator(5, largeSize))
	growth, alloc := w.done()
	if err != nil {
		t.Fatalf("Put of %d streamed bytes: %v", largeSize, err)
	}
	if info.Digest != want || info.Size != largeSize {
		t.Fatalf("Put = %+v, want %s, %d bytes", info, want, largeSize)
	}
	t.Logf("Put %d MB: heap grew %.1f MB at peak, %.1f MB allocated", largeSize>>20, mb(growth), mb(alloc))
	if growth > largeHeapBound || alloc > largeHeapBound {
		t.Fatalf("Put of %d MB grew the heap by %.1f MB and allocated %.1f MB; bound %d MB: is it buffering the blob?",
			largeSize>>20, mb(growth), mb(alloc), largeHeapBound>>20)
	}

	w = watchHeap()
	rc, err := s.Open(ctx, info.Digest)
	if err != nil {
		w.done()
		t.Fatalf("Open(%s): %v", info.Digest, err)
	}
	h := sha256.New()
	n, err := io.Copy(h, rc)
	rc.Close()
	growth, alloc = w.done()
	if err != nil || n != largeSize {
		t.Fatalf("reading %s: %d bytes, %v", info.Digest, n, err)
	}
	if got := blob.FormatDigest(hex.EncodeToString(h.Sum(nil))); got != want {
		t.Fatalf("read back content hashing to %s, want %s", got, want)
	}
	t.Logf("Open %d MB: heap grew %.1f MB at peak, %.1f MB allocated", largeSize>>20, mb(growth), mb(alloc))
	if growth > largeHeapBound || alloc > largeHeapBound {
		t.Fatalf("reading %d MB grew the heap by %.1f MB and allocated %.1f MB; bound %d MB",
			largeSize>>20, mb(growth), mb(alloc), largeHeapBound>>20)
	}
}

// testCancelledPut cancels the context while Put is reading an endless
// stream: Put must fail with the context error and leave nothing behind.
func testCancelledPut(t *testing.T, s blob.Store, tempFiles func(*testing.T, blob.Store) []string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &hookReader{r: newGenerator(6, 1<<62), after: 1 << 20, hook: cancel}
	_, err := s.Put(ctx, r)
	wantError(t, "Put with a cancelled context", err, skilld.EUNAVAILABLE, context.Canceled, "")
	checkNothingLeft(t, s, tempFiles)
}

// testFailingReader gives Put a reader that fails midway: Put must return
// that failure (keeping its code) and leave nothing behind.
func testFailingReader(t *testing.T, s blob.Store, tempFiles func(*testing.T, blob.Store) []string) {
	cause := skilld.Errorf(skilld.ETOOLARGE, "upload over the limit")
	r := &hookReader{r: newGenerator(7, 1<<62), after: 512 << 10, fail: cause}
	_, err := s.Put(context.Background(), r)
	wantError(t, "Put from a failing reader", err, skilld.ETOOLARGE, cause, "upload over the limit")
	checkNothingLeft(t, s, tempFiles)
}

func checkNothingLeft(t *testing.T, s blob.Store, tempFiles func(*testing.T, blob.Store) []string) {
	t.Helper()
	if got := listAll(t, s, ""); len(got) != 0 {
		t.Fatalf("a failed Put left blobs: %v", got)
	}
	if tempFiles == nil {
		t.Log("driver has no TempFiles hook: temp files not checked")
		return
	}
	if left := tempFiles(t, s); len(left) != 0 {
		t.Fatalf("a failed Put left temp files: %v", left)
	}
}

// hookReader passes r through; once more than after bytes have been read
// it calls hook (once) and, if fail is set, fails every further read.
type hookReader struct {
	r     io.Reader
	after int64
	n     int64
	hook  func()
	fail  error
}

func (h *hookReader) Read(p []byte) (int, error) {
	if h.n > h.after {
		if h.hook != nil {
			h.hook()
			h.hook = nil
		}
		if h.fail != nil {
			return 0, h.fail
		}
	}
	n, err := h.r.Read(p)
	h.n += int64(n)
	return n, err
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }
