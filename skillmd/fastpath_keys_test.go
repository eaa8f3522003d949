package skillmd

import (
	"fmt"
	"strings"
	"testing"
)

// A repeated key goes to the parser whether the frontmatter is short
// (keys found by scanning) or long (found through a map), wherever the
// repeat falls.
func TestFastPathRepeatedKeys(t *testing.T) {
	keys := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("k%d: v", i))
		}
		return out
	}
	for _, n := range []int{2, fieldScanMax - 1, fieldScanMax, fieldScanMax + 1, 3 * fieldScanMax} {
		lines := keys(n)
		if fields, ok := fastFrontmatter(strings.Join(lines, "\n") + "\n"); !ok || len(fields) != n {
			t.Errorf("%d distinct keys: %d fields, %v", n, len(fields), ok)
		}
		for _, again := range []int{0, n / 2, n - 1} {
			fm := strings.Join(append(lines, lines[again]), "\n") + "\n"
			if _, ok := fastFrontmatter(fm); ok {
				t.Errorf("%d keys, key %d again: the fast path took it", n, again)
			}
		}
	}
}
