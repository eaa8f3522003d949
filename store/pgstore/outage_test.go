package pgstore_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/pgstore"
	"github.com/skilld/skilld/store/storetest"
)

// TestOutage: while PostgreSQL cannot be reached, every kind of call —
// a read, a write, a transaction — fails as EUNAVAILABLE (not internal),
// and the store works again once the database is back.
func TestOutage(t *testing.T) {
	s, outage, ws, url := outageStore(t, nil)
	outage.Cut()
	calls := storeCalls(t, s, ws)
	for name, call := range calls {
		if err := call(); skilld.ErrorCode(err) != skilld.EUNAVAILABLE || skilld.ErrorBackend(err) != skilld.BackendDatabase {
			t.Errorf("%s during the outage: %v (code %s, backend %q), want EUNAVAILABLE from the database", name, err, skilld.ErrorCode(err), skilld.ErrorBackend(err))
		}
	}
	_, err := pgstore.Open(t.Context(), url, nil)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
		t.Errorf("opening during the outage: %v", err)
	}
	outage.Restore()
	for name, call := range calls {
		if err := call(); err != nil {
			t.Errorf("%s after the outage: %v", name, err)
		}
	}
}

// TestStalledDatabase: a PostgreSQL that keeps its connections but answers
// nothing (stopped with SIGSTOP) does not hang calls: each fails as
// EUNAVAILABLE once the store's call timeout passes, saying so, and the
// store works again once the database answers.
func TestStalledDatabase(t *testing.T) {
	s, outage, ws, _ := outageStore(t, &store.Options{CallTimeout: time.Second})
	outage.Stall()
	calls := storeCalls(t, s, ws)
	delete(calls, "write")
	for name, call := range calls {
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- call() }()
		select {
		case err := <-done:
			if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(skilld.ErrorMessage(err), "did not answer within 1s") {
				t.Errorf("%s on a stalled database: %v (code %s)", name, err, skilld.ErrorCode(err))
			}
			t.Logf("%s gave up after %v", name, time.Since(start).Round(time.Millisecond))
		case <-time.After(time.Minute):
			t.Fatalf("%s on a stalled database hangs", name)
		}
	}
	outage.Resume()
	for name, call := range calls {
		if name == "transaction" {
			continue // it may have been committed before the stall held its answer
		}
		if err := call(); err != nil {
			t.Errorf("%s once the database answers: %v", name, err)
		}
	}
}

// TestEditsAfterRestart: right after PostgreSQL restarts (every pooled
// connection broken at once), edits of skills that exist are never told
// the skill is not found: each either goes through or fails as
// EUNAVAILABLE.
func TestEditsAfterRestart(t *testing.T) {
	s, outage, ws, _ := outageStore(t, nil)
	var ids []string
	for i := range 65 {
		sk, err := s.SkillCreate(t.Context(), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: fmt.Sprint("s", i), Description: "d", SourceType: skilld.SourceContent})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sk.ID)
	}
	for round := range 3 {
		// Fill the pool with open connections, then break them all.
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() { s.SkillGet(t.Context(), &store.SkillGetParams{WorkspaceID: ws.ID, ID: id}) })
		}
		wg.Wait()
		outage.Cut()
		outage.Restore()
		desc := fmt.Sprint("edited ", round)
		errs := make(chan error, len(ids))
		for _, id := range ids {
			wg.Go(func() {
				_, err := s.SkillUpdate(t.Context(), &store.SkillUpdateParams{WorkspaceID: ws.ID, ID: id, Description: &desc})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		failed := 0
		for err := range errs {
			if err != nil {
				failed++
			}
			if err != nil && skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
				t.Errorf("round %d: an edit of an existing skill: %v (code %s)", round, err, skilld.ErrorCode(err))
			}
		}
		t.Logf("round %d: %d of %d edits met a broken connection", round, failed, len(ids))
	}
}

// outageStore opens a store through an outage proxy, with a workspace;
// url reaches the database through the proxy.
func outageStore(t *testing.T, opts *store.Options) (s *pgstore.Store, outage *storetest.Outage, ws *skilld.Workspace, url string) {
	t.Helper()
	url, outage = storetest.PostgresOutage(t)
	s, err := pgstore.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ws, err = s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	return s, outage, ws, url
}

// storeCalls are one call of each kind: a read, a write, a transaction,
// a list.
func storeCalls(t *testing.T, s *pgstore.Store, ws *skilld.Workspace) map[string]func() error {
	return map[string]func() error{
		"read": func() error {
			_, err := s.WorkspaceGet(t.Context(), &store.WorkspaceGetParams{ID: ws.ID})
			return err
		},
		"write": func() error {
			_, err := s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "x"})
			return err
		},
		"transaction": func() error {
			_, err := s.SkillCreate(t.Context(), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: "s", Description: "d", SourceType: skilld.SourceContent})
			return err
		},
		"list": func() error {
			_, err := s.SkillList(t.Context(), &store.SkillListParams{WorkspaceID: ws.ID, Page: store.Page{Limit: 10}})
			return err
		},
	}
}
