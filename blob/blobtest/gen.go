package blobtest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/skilld/skilld/blob"
)

// generator produces n reproducible pseudo-random bytes without holding
// them, so a test can stream a blob far larger than it wants in memory.
type generator struct {
	rng  *rand.ChaCha8
	left int64
}

func newGenerator(seed byte, n int64) *generator {
	var key [32]byte
	key[0] = seed
	return &generator{rng: rand.NewChaCha8(key), left: n}
}

func (g *generator) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	n, _ := g.rng.Read(p) // never fails
	g.left -= int64(n)
	return n, nil
}

// generatedDigest is the digest of newGenerator(seed, n)'s output.
func generatedDigest(seed byte, n int64) string {
	h := sha256.New()
	io.Copy(h, newGenerator(seed, n))
	return blob.FormatDigest(hex.EncodeToString(h.Sum(nil)))
}

// heapWatch samples the Go heap while a test runs, to catch code that
// buffers a whole blob. Sampling (not just before/after) sees a buffer that
// was allocated and released within the operation.
type heapWatch struct {
	baseInuse, baseTotal uint64
	peak                 uint64
	stop                 chan struct{}
	wg                   sync.WaitGroup
}

func watchHeap() *heapWatch {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w := &heapWatch{baseInuse: m.HeapInuse, baseTotal: m.TotalAlloc, peak: m.HeapInuse, stop: make(chan struct{})}
	w.wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				w.peak = max(w.peak, m.HeapInuse)
			}
		}
	})
	return w
}

// done stops sampling and returns the peak growth of the heap in use and
// the bytes allocated in total (including garbage) since watchHeap.
func (w *heapWatch) done() (peakGrowth, allocated uint64) {
	close(w.stop)
	w.wg.Wait()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w.peak = max(w.peak, m.HeapInuse)
	return w.peak - min(w.peak, w.baseInuse), m.TotalAlloc - w.baseTotal
}
