package store_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/store"
)

func TestSlugify(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("abc-", 40)
	for _, tt := range []struct{ in, want string }{
		{"Deploy API", "deploy-api"},
		{"deploy_api", "deploy-api"},
		{"  --Café  Ünïcode!! ", "cafe-unicode"},
		{"ﬁle ①", "file-1"}, // NFKD folds compatibility forms
		{"навык", "item"},
		{"技能 v2", "v2"},
		{"!!!", "item"},
		{"", "item"},
		{long, strings.TrimRight(long[:100], "-")},
	} {
		if got := store.Slugify(tt.in); got != tt.want {
			t.Errorf("Slugify(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := store.SlugCandidate("x", 1); got != "x" {
		t.Errorf("candidate 1 = %q", got)
	}
	if got := store.SlugCandidate("x", 999); got != "x-999" {
		t.Errorf("candidate 999 = %q", got)
	}
	base := strings.Repeat("a", 100)
	if got := store.SlugCandidate(base, 12); len(got) != 100 || !strings.HasSuffix(got, "-12") {
		t.Errorf("long candidate = %q (%d)", got, len(got))
	}
	if got := store.LikePattern(`50%_Off\`); got != `%50\%\_off\\%` {
		t.Errorf("LikePattern = %q", got)
	}
}
