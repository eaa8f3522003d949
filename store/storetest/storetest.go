// Package storetest is the conformance suite of the store contract. Every
// driver runs it against a real database:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
//	}
//
// open must return an empty, migrated store that the suite may write to
// freely, and close it when the test ends.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// Opener returns a fresh, migrated, empty store for one test.
type Opener func(t *testing.T) store.Store

// Run runs every conformance test against stores made by open.
func Run(t *testing.T, open Opener) {
	t.Run("Migrations", func(t *testing.T) { testMigrations(t, open) })
	t.Run("Workspaces", func(t *testing.T) { testWorkspaces(t, open) })
	t.Run("MembersAndTokens", func(t *testing.T) { testMembersAndTokens(t, open) })
	t.Run("Skills", func(t *testing.T) { testSkills(t, open) })
	t.Run("LookalikeNames", func(t *testing.T) { testLookalikeNames(t, open) })
	t.Run("Slugs", func(t *testing.T) { testSlugs(t, open) })
	t.Run("SlugExhaustion", func(t *testing.T) { testSlugExhaustion(t, open) })
	t.Run("SkillVersions", func(t *testing.T) { testSkillVersions(t, open) })
	t.Run("ConcurrentVersions", func(t *testing.T) { testConcurrentVersions(t, open) })
	t.Run("Packages", func(t *testing.T) { testPackages(t, open) })
	t.Run("PackageScans", func(t *testing.T) { testPackageScans(t, open) })
	t.Run("PermissionApprovals", func(t *testing.T) { testPermissionApprovals(t, open) })
	t.Run("Secrets", func(t *testing.T) { testSecrets(t, open) })
	t.Run("Catalog", func(t *testing.T) { testCatalog(t, open) })
	t.Run("CatalogSignatures", func(t *testing.T) { testCatalogSignatures(t, open) })
	t.Run("SkillList", func(t *testing.T) { testSkillList(t, open) })
	t.Run("SkillListRevision", func(t *testing.T) { testSkillListRevision(t, open) })
	t.Run("Installs", func(t *testing.T) { testInstalls(t, open) })
	t.Run("Policy", func(t *testing.T) { testPolicy(t, open) })
	t.Run("Agents", func(t *testing.T) { testAgents(t, open) })
	t.Run("EvalResults", func(t *testing.T) { testEvalResults(t, open) })
	t.Run("Tasks", func(t *testing.T) { testTasks(t, open) })
	t.Run("ConcurrentTaskLog", func(t *testing.T) { testConcurrentTaskLog(t, open) })
	t.Run("TaskLogBatch", func(t *testing.T) { testTaskLogBatch(t, open) })
	t.Run("TaskPackages", func(t *testing.T) { testTaskPackages(t, open) })
	t.Run("TaskOutputs", func(t *testing.T) { testTaskOutputs(t, open) })
	t.Run("TaskDelete", func(t *testing.T) { testTaskDelete(t, open) })
	t.Run("TaskListFinished", func(t *testing.T) { testTaskListFinished(t, open) })
	t.Run("SkillUsage", func(t *testing.T) { testSkillUsage(t, open) })
	t.Run("StorageUsage", func(t *testing.T) { testStorageUsage(t, open) })
	t.Run("Events", func(t *testing.T) { testEvents(t, open) })
	t.Run("Transactions", func(t *testing.T) { testTransactions(t, open) })
	t.Run("WorkspaceIsolation", func(t *testing.T) { testWorkspaceIsolation(t, open) })
}

// must fails the test on err.
func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := skilld.ErrorCode(err); got != code {
		t.Fatalf("error code = %q, want %q (err: %v)", got, code, err)
	}
	var se *skilld.Error
	if !errors.As(err, &se) || se.Message == "" {
		t.Fatalf("error %v is not a *skilld.Error with a message", err)
	}
}

func newWorkspace(t *testing.T, s store.Store, name string) *skilld.Workspace {
	t.Helper()
	return must[*skilld.Workspace](t)(s.WorkspaceCreate(t.Context(), &store.WorkspaceCreateParams{Name: name}))
}

func newSkill(t *testing.T, s store.Querier, ws, name string) *skilld.Skill {
	t.Helper()
	return must[*skilld.Skill](t)(s.SkillCreate(t.Context(), &store.SkillCreateParams{
		WorkspaceID: ws, Name: name, Description: "about " + name, SourceType: skilld.SourceContent, CreatedBy: "tester",
	}))
}

// newPackage stores a package with one file and returns its digest.
func newPackage(t *testing.T, s store.Querier, seed string) string {
	t.Helper()
	digest := fmt.Sprintf("sha256:%064x", hash(seed))
	file := fmt.Sprintf("sha256:%064x", hash("file "+seed))
	must[*store.PackageCreateResult](t)(s.PackageCreate(t.Context(), &store.PackageCreateParams{
		Digest: digest, Manifest: []byte("100644 1 x SKILL.md\n"), Size: 1,
		Files: []skilld.PackageFile{{Path: "SKILL.md", Digest: file, Size: 1}},
	}))
	return digest
}

// hash is a small deterministic number for fake digests.
func hash(s string) uint64 {
	var h uint64 = 1469598103934665603
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

func ctx(t *testing.T) context.Context { return t.Context() }
