package store_test

import (
	"testing"

	"github.com/skilld/skilld/store"
)

func TestNameSkeleton(t *testing.T) {
	same := [][2]string{{"pdf-tools", "pdf-t\u043e\u043els"}, {"pdf-tools", "pdf-t\u03bf\u03bfls"}, {"rn-skill", "m-skill"}, {"данные", "данныe"}}
	for _, p := range same {
		if store.NameSkeleton(p[0]) != store.NameSkeleton(p[1]) {
			t.Errorf("%q and %q should be confusable", p[0], p[1])
		}
	}
	differ := [][2]string{{"pdf-tools", "pdf-tool"}, {"данные", "数据处理"}, {"csv-inspector", "csv-inspect0r-x"}}
	for _, p := range differ {
		if store.NameSkeleton(p[0]) == store.NameSkeleton(p[1]) {
			t.Errorf("%q and %q should not be confusable", p[0], p[1])
		}
	}
}

func BenchmarkNameSkeleton(b *testing.B) {
	for b.Loop() {
		store.NameSkeleton("release-notes-generator")
	}
}
