package confusable

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// golden reads testdata/skeletons.txt: skeletons made by the
// implementation skilld used before this package (go.mau.fi/util's), which
// Skeleton must reproduce exactly, since skeletons are stored as keys.
func golden(t *testing.T) (pairs [][2]string, digest string) {
	t.Helper()
	f, err := os.Open("testdata/skeletons.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "# sha256 of \"%X\\t%s\\n\" (code point, skeleton) over every scalar value: "); ok {
			digest = d
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		in, want, ok := strings.Cut(line, "\t")
		var err1, err2 error
		in, err1 = strconv.Unquote(in)
		want, err2 = strconv.Unquote(want)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("skeletons.txt:%d: %q is not two quoted strings", n, line)
		}
		pairs = append(pairs, [2]string{in, want})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(pairs) < len(sources) || digest == "" {
		t.Fatalf("skeletons.txt has %d pairs and digest %q", len(pairs), digest)
	}
	return pairs, digest
}

func TestSkeletonGolden(t *testing.T) {
	pairs, _ := golden(t)
	bad := 0
	for _, p := range pairs {
		if got := Skeleton(p[0]); got != p[1] {
			t.Errorf("Skeleton(%+q) = %+q, want %+q", p[0], got, p[1])
			if bad++; bad == 20 {
				t.Fatal("too many differences")
			}
		}
	}
}

// TestSkeletonEveryScalar compares the skeleton of every Unicode scalar
// value, as one digest. The lines are made in parallel, a block of code
// points each, and hashed in order.
func TestSkeletonEveryScalar(t *testing.T) {
	if testing.Short() {
		t.Skip("1.1 million skeletons")
	}
	_, want := golden(t)
	const block = 0x10000
	lines := make([][]byte, (utf8.MaxRune+1)/block)
	var wg sync.WaitGroup
	for i := range lines {
		wg.Go(func() {
			var b []byte
			for r := rune(i * block); r < rune(i+1)*block; r++ {
				if utf8.ValidRune(r) {
					b = fmt.Appendf(b, "%X\t%s\n", r, Skeleton(string(r)))
				}
			}
			lines[i] = b
		})
	}
	wg.Wait()
	h := sha256.New()
	for _, b := range lines {
		h.Write(b)
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("digest of every scalar's skeleton = %s, want %s", got, want)
	}
}

func TestSkeletonLookalikes(t *testing.T) {
	// Latin o, Cyrillic о, Greek ο; mathematical letters; a precomposed
	// é and e with a combining acute.
	for _, group := range [][]string{
		{"pdf-tools", "pdf-tооls", "pdf-tοοls"},
		{"MEOW", "𝗠𝔼𝑶𝓦"},
		{"é", "e\u0301"},
	} {
		for _, s := range group[1:] {
			if Skeleton(s) != Skeleton(group[0]) {
				t.Errorf("Skeleton(%+q) = %+q, Skeleton(%+q) = %+q: want them equal", s, Skeleton(s), group[0], Skeleton(group[0]))
			}
		}
	}
	if Skeleton("pdf-tools") == Skeleton("pdf-tool") {
		t.Error("different names share a skeleton")
	}
}

func BenchmarkSkeleton(b *testing.B) {
	for b.Loop() {
		Skeleton("pdf-tооls 𝗠𝔼𝑶𝓦")
	}
}
