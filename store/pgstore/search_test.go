package pgstore_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/pgstore"
	"github.com/skilld/skilld/store/storetest"
)

// TestSearchWithoutTrigram runs the migrations as a role that may not
// create extensions, in a database without pg_trgm: they must still apply,
// without the trigram indexes, and search must still find skills.
func TestSearchWithoutTrigram(t *testing.T) {
	base := storetest.PostgresURL(t, true)
	name := fmt.Sprintf("notrgm_%d", time.Now().UnixNano())
	admin, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	for _, q := range []string{"CREATE ROLE " + name + " LOGIN", "CREATE DATABASE " + name} {
		if _, err := admin.Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
		admin.Exec(context.Background(), "DROP ROLE "+name)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	dbAdmin, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer dbAdmin.Close(context.Background())
	if _, err := dbAdmin.Exec(t.Context(), "CREATE SCHEMA app AUTHORIZATION "+name); err != nil {
		t.Fatal(err)
	}
	u.User = url.User(name)
	q := u.Query()
	q.Set("search_path", "app")
	u.RawQuery = q.Encode()

	s, err := pgstore.Open(t.Context(), u.String(), nil)
	if err != nil {
		t.Fatalf("migrations without pg_trgm: %v", err)
	}
	defer s.Close()
	var indexes int
	if err := dbAdmin.QueryRow(t.Context(), "SELECT count(*) FROM pg_indexes WHERE indexname = 'skills_search'").Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if indexes != 0 {
		t.Errorf("skills_search index created without pg_trgm")
	}
	ws, err := s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"pdf-tools", "csv-inspector"} {
		if _, err := s.SkillCreate(t.Context(), &store.SkillCreateParams{WorkspaceID: ws.ID, Name: n,
			Description: "Works with " + n, SourceType: skilld.SourceContent}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.SkillList(t.Context(), &store.SkillListParams{WorkspaceID: ws.ID, Search: "INSPECT"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || len(res.Items) != 1 || res.Items[0].Skill.Name != "csv-inspector" {
		t.Errorf("search without the index: %+v", res)
	}
}
