package sqlitestore_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/sqlitestore"
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

// TestSkeletonBackfill: upgrading a database that already holds two
// confusable skills gives the older one the skeleton, keeps both, and holds
// new names to the rule.
func TestSkeletonBackfill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skilld.db")
	s, err := sqlitestore.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SkillCreate(t.Context(), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "pdf-tools", Description: "d", SourceType: skilld.SourceContent}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Back to the schema before migration 5, plus a lookalike written the
	// way an older version could.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP INDEX skills_name_skeleton`,
		`ALTER TABLE skills DROP COLUMN name_skeleton`,
		`DELETE FROM schema_migrations WHERE version = 5`,
		`INSERT INTO skills (id, workspace_id, name, slug, description, search_text, source_type, created_at, updated_at)
			SELECT 'zz-lookalike', workspace_id, 'pdf-t` + "\u043e\u043e" + `ls', 'pdf-t-ls', 'd', 'd', 'content', updated_at, updated_at FROM skills`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err = sqlitestore.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatalf("upgrading a store holding confusable names: %v", err)
	}
	defer s.Close()
	skills, err := s.SkillList(t.Context(), &store.SkillListParams{WorkspaceID: ws.ID, Page: store.Page{Limit: 10}})
	if err != nil || len(skills.Items) != 2 {
		t.Fatalf("after upgrade: %+v, %v", skills, err)
	}
	_, err = s.SkillCreate(t.Context(), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "pdf-t\u03bf\u03bfls", Description: "d", SourceType: skilld.SourceContent})
	if skilld.ErrorCode(err) != skilld.ECONFLICT || !strings.Contains(err.Error(), `"pdf-tools"`) {
		t.Fatalf("a new lookalike after the upgrade: %v", err)
	}
	// The grandfathered skill can still be edited.
	if _, err := s.SkillUpdate(t.Context(), &store.SkillUpdateParams{WorkspaceID: ws.ID, ID: "zz-lookalike", Description: ptr("still here")}); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestTaskResultsBackfill: migration 7 fills the results of tasks an older
// version wrote, from their logs.
func TestTaskResultsBackfill(t *testing.T) {
	open, revert := reopening(t, storetest.RevertTaskResults)
	storetest.TaskResultsBackfill(t, open, revert)
}

// TestStorageUsageBackfill: migration 10 counts the log bytes of tasks an
// older version wrote.
func TestStorageUsageBackfill(t *testing.T) {
	open, revert := reopening(t, storetest.RevertStorageUsage)
	storetest.StorageUsageBackfill(t, open, revert)
}

// reopening opens one database file each time, and reverts a migration
// on it with revertSQL while it is closed.
func reopening(t *testing.T, revertSQL string) (open func(t *testing.T) store.Store, revert func(t *testing.T)) {
	path := filepath.Join(t.TempDir(), "skilld.db")
	return func(t *testing.T) store.Store {
			s, err := sqlitestore.Open(t.Context(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, func(t *testing.T) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(revertSQL); err != nil {
				t.Fatal(err)
			}
		}
}
