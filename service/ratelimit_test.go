package service_test

import (
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// TestSearchAndImportRates: a workspace gets its per-minute count of
// searches at once, then is refused with when to retry, and gets more as
// the minute goes; another workspace is not slowed, nor are lists without
// a search; imports have a bucket of their own.
func TestSearchAndImportRates(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{Now: clock, Rates: service.Rates{Searches: 3, Imports: 1},
		PathImportRoots: []string{t.TempDir()}}, nil)
	search := func(a service.Actor) error {
		_, err := e.svc.ListSkills(t.Context(), a, service.ListSkillsParams{Search: "pdf"})
		return err
	}
	for i := range 3 {
		if err := search(e.member); err != nil {
			t.Fatalf("search %d: %v", i+1, err)
		}
	}
	err := search(e.member)
	if skilld.ErrorCode(err) != skilld.ERATELIMITED || len(skilld.ErrorDetails(err)) != 1 || skilld.ErrorDetails(err)[0].Field != "retry_after" || skilld.ErrorDetails(err)[0].Message != "20" {
		t.Fatalf("a fourth search in the minute: %v %+v", err, skilld.ErrorDetails(err))
	}
	if err := search(e.other); err != nil {
		t.Errorf("another workspace's search: %v", err)
	}
	if _, err := e.svc.ListSkills(t.Context(), e.member, service.ListSkillsParams{}); err != nil {
		t.Errorf("a list without a search: %v", err)
	}
	if _, err := e.svc.ListCatalogItems(t.Context(), e.member, service.ListCatalogItemsParams{Search: "pdf"}); skilld.ErrorCode(err) != skilld.ERATELIMITED {
		t.Errorf("a catalog search shares the bucket: %v", err)
	}
	mu.Lock()
	now = now.Add(20 * time.Second)
	mu.Unlock()
	if err := search(e.member); err != nil {
		t.Errorf("a search once a token came back: %v", err)
	}

	// Imports: one per minute here; the refusal comes before the path is
	// looked at.
	if _, err := e.svc.ImportPath(t.Context(), e.admin, service.ImportPathParams{Path: "/nowhere"}); skilld.ErrorCode(err) == skilld.ERATELIMITED {
		t.Fatalf("a first import: %v", err)
	}
	if _, err := e.svc.ImportPath(t.Context(), e.admin, service.ImportPathParams{Path: "/nowhere"}); skilld.ErrorCode(err) != skilld.ERATELIMITED {
		t.Errorf("a second import in the minute: %v", err)
	}
}
