package sqlitestore_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) })
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store { return storetest.OpenSQLite(b) })
}

// TestQueryPlans checks that listing skills reads through indexes, never a
// scan of the whole skills table. The plans it relies on are recorded in
// docs/STORAGE.md.
func TestQueryPlans(t *testing.T) {
	s := storetest.OpenSQLite(t)
	for _, p := range storetest.PlanCases() {
		for _, st := range s.SkillListStatements(&p) {
			plan, err := s.Explain(t.Context(), st)
			if err != nil {
				t.Fatalf("%s: %v", st.SQL, err)
			}
			for _, line := range plan {
				// FTS5 reports its searches as a scan of the virtual
				// table with the constraints it uses ("INDEX 0:L0" is a
				// LIKE answered from the trigram index).
				fts := strings.Contains(line, "VIRTUAL TABLE INDEX") && !strings.HasSuffix(line, ":")
				// "page" is the page of ids chosen before the join: at
				// most one page of rows.
				if strings.HasPrefix(line, "SCAN") && !strings.Contains(line, "USING") && !fts && line != "SCAN page" {
					t.Errorf("full table scan %q in plan of\n%s\nplan: %q", line, st.SQL, plan)
				}
			}
			if testing.Verbose() {
				t.Logf("%s\n  %s", st.SQL, strings.Join(plan, "\n  "))
			}
		}
	}
}
