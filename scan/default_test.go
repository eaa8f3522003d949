package scan

import (
	"reflect"
	"sync"
	"testing"

	"github.com/skilld/skilld/pack"
)

// TestDefaultRules: the embedded rules file parses, so Default, which
// parses it on first use and panics if it cannot, never panics in a
// server; and the lazily parsed scanner has the rules New gives.
func TestDefaultRules(t *testing.T) {
	v, rules, err := ParseRules(defaultRules)
	if err != nil {
		t.Fatalf("the embedded rules file: %v", err)
	}
	s := Default()
	if s.Version() != v || len(s.Rules()) != len(rules) {
		t.Fatalf("Default: version %d with %d rules, the file has version %d with %d", s.Version(), len(s.Rules()), v, len(rules))
	}
	for i, r := range s.Rules() {
		if r.ID != rules[i].ID || r.Severity != rules[i].Severity || !reflect.DeepEqual(r.files, rules[i].files) {
			t.Errorf("rule %d: %s, the file has %s", i, r.ID, rules[i].ID)
		}
	}
}

// TestDefaultFirstUseConcurrent: the first uses of one Default scanner
// may come at once (requests of a server just started); each sees the
// parsed rules (run with -race).
func TestDefaultFirstUseConcurrent(t *testing.T) {
	pkg, err := pack.ReadDir(t.Context(), "testdata/fire/pipe-to-shell", pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	s := Default()
	var wg sync.WaitGroup
	found := make([]int, 8)
	for i := range found {
		wg.Go(func() {
			fs, err := s.Scan(t.Context(), pkg)
			if err != nil {
				t.Error(err)
			}
			found[i] = len(fs)
			_ = s.Version()
		})
	}
	wg.Wait()
	for i, n := range found {
		if n == 0 || n != found[0] {
			t.Errorf("scan %d found %d, scan 0 found %d", i, n, found[0])
		}
	}
}
