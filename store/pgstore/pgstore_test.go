package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/skilld/skilld"

	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/pgstore"
	"github.com/skilld/skilld/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.OpenPostgres(t) })
}

func TestOpenErrors(t *testing.T) {
	_, err := pgstore.Open(t.Context(), "postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=1", nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("unreachable server: %v", err)
	}
	_, err = pgstore.Open(t.Context(), "postgres://u:hunter2@[bad", nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad URL: %v", err)
	}
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store { return storetest.OpenPostgres(b) })
}

// TestQueryPlans checks, on a few thousand skills, that PostgreSQL lists
// skills through indexes, never a sequential scan of the skills table. The
// plans it relies on are recorded in docs/STORAGE.md.
func TestQueryPlans(t *testing.T) {
	url := storetest.FreshPostgresURL(t)
	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var target string
	for i := range 3 {
		ws, err := s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: fmt.Sprint("w", i)})
		if err != nil {
			t.Fatal(err)
		}
		target = ws.ID
		err = s.Tx(t.Context(), func(q store.Querier) error {
			for j := range 2000 {
				if _, err := q.SkillCreate(t.Context(), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: fmt.Sprint("skill ", j),
					Description: "d", SourceType: skilld.SourceContent}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	// Other workspaces' rows, written directly because only their number
	// matters: on a table of a few thousand rows reading it whole is
	// cheaper than 50 index probes, and the planner rightly does so.
	filler, err := s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "filler"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), `INSERT INTO skills (id, workspace_id, name, slug, description, search_text, source_type, created_at, updated_at)
		SELECT 'filler-' || i, $1, 'filler ' || i, 'filler-' || i, 'd', 'filler ' || i || ' d', 'content', now(), now()
		FROM generate_series(1, 40000) AS i`, filler.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	for _, p := range storetest.PlanCases() {
		p.WorkspaceID = target
		for _, st := range s.SkillListStatements(&p) {
			plan, err := s.Explain(t.Context(), st)
			if err != nil {
				t.Fatalf("%s: %v", st.SQL, err)
			}
			text := strings.Join(plan, "\n")
			if strings.Contains(text, "Seq Scan on skills") {
				t.Errorf("sequential scan of skills in plan of\n%s\n%s", st.SQL, text)
			}
			if testing.Verbose() {
				t.Logf("%s\n%s", st.SQL, text)
			}
		}
	}
}

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

// reopening opens one fresh database each time, and reverts a migration
// on it with revertSQL while it is closed.
func reopening(t *testing.T, revertSQL string) (open func(t *testing.T) store.Store, revert func(t *testing.T)) {
	url := storetest.FreshPostgresURL(t)
	return func(t *testing.T) store.Store { return storetest.OpenPostgresAt(t, url) }, func(t *testing.T) {
		c, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(t.Context(), revertSQL); err != nil {
			t.Fatal(err)
		}
	}
}
