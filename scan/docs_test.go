package scan_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/skilld/skilld/scan"
)

// TestRulesDocumented: docs/TRUST.md's table lists every rule with its
// severity, and no rule that does not exist.
func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/TRUST.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (info|low|medium|high|critical) \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = m[2]
	}
	for _, r := range scan.Default().Rules() {
		if sev, ok := documented[r.ID]; !ok || sev != string(r.Severity) {
			t.Errorf("docs/TRUST.md lists %s as %q, want %q", r.ID, sev, r.Severity)
		}
		delete(documented, r.ID)
	}
	for id := range documented {
		t.Errorf("docs/TRUST.md lists %s, which is no rule", id)
	}
}
