package storetest

import (
	"fmt"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// SeedSkills inserts skills skill-<from> … skill-<to-1> (five digits) into
// a workspace, each with description and one version of the package
// digest (already stored), in transactions of 1,000: load tests and
// benchmarks need thousands of skills in seconds, which creating them one
// by one through the service does not give.
func SeedSkills(tb testing.TB, s store.Store, workspaceID, digest, description string, from, to int) {
	tb.Helper()
	ctx := tb.Context()
	for start := from; start < to; start += 1000 {
		err := s.Tx(ctx, func(q store.Querier) error {
			for i := start; i < min(start+1000, to); i++ {
				sk, err := q.SkillCreate(ctx, &store.SkillCreateParams{WorkspaceID: workspaceID, Name: fmt.Sprintf("skill-%05d", i),
					Description: description, SourceType: skilld.SourceContent})
				if err != nil {
					return err
				}
				if _, err := q.SkillVersionCreate(ctx, &store.SkillVersionCreateParams{WorkspaceID: workspaceID, SkillID: sk.ID, Digest: digest}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}
