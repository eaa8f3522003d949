package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// Bench runs the store benchmarks against stores made by open.
func Bench(b *testing.B, open func(b *testing.B) store.Store) {
	b.Run("SkillCreate", func(b *testing.B) { benchSkillCreate(b, open) })
	b.Run("SkillList100k", func(b *testing.B) { benchSkillList(b, open) })
	b.Run("TaskLogAppend", func(b *testing.B) { benchTaskLogAppend(b, open) })
	b.Run("SkillUsageSummary50k", func(b *testing.B) { benchSkillUsageSummary(b, open) })
}

// fillSkills inserts n skills into a new workspace, in transactions of
// 1,000, and returns the workspace.
func fillSkills(b *testing.B, s store.Store, n int) *skilld.Workspace {
	b.Helper()
	ws, err := s.WorkspaceCreate(b.Context(), &store.WorkspaceCreateParams{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for start := 0; start < n; start += 1000 {
		err := s.Tx(b.Context(), func(q store.Querier) error {
			for i := start; i < min(start+1000, n); i++ {
				if _, err := q.SkillCreate(b.Context(), &store.SkillCreateParams{
					WorkspaceID: ws.ID, Name: fmt.Sprintf("skill %06d", i),
					Description: "A skill used to measure how listing scales with many skills in one workspace.",
					SourceType:  skilld.SourceContent,
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// benchSkillCreate measures inserting skills one by one, each in its own
// transaction (slug lookup and insert), into a workspace of 10,000.
func benchSkillCreate(b *testing.B, open func(b *testing.B) store.Store) {
	s := open(b)
	ws := fillSkills(b, s, 10_000)
	i := 0
	for b.Loop() {
		i++
		if _, err := s.SkillCreate(b.Context(), &store.SkillCreateParams{
			WorkspaceID: ws.ID, Name: fmt.Sprintf("extra %d", i), Description: "d", SourceType: skilld.SourceContent,
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSkillList measures one page of 50 (with the total count) out of
// 100,000 skills: the first page, a page deep in the list, and a search.
func benchSkillList(b *testing.B, open func(b *testing.B) store.Store) {
	s := open(b)
	ws := fillSkills(b, s, 100_000)
	for _, c := range []struct {
		name string
		p    store.SkillListParams
	}{
		{"FirstPage", store.SkillListParams{Page: store.Page{Limit: 50}}},
		{"Page1000", store.SkillListParams{Page: store.Page{Limit: 50, Offset: 50_000}}},
		// The same page reached by its cursor: the last name of page 999.
		{"Keyset1000", store.SkillListParams{Page: store.Page{Limit: 50}, After: &store.SkillListCursor{Name: fmt.Sprintf("skill %06d", 49_999)}}},
		{"Search", store.SkillListParams{Search: "skill 09999", Page: store.Page{Limit: 50}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := c.p
			p.WorkspaceID = ws.ID
			for b.Loop() {
				res, err := s.SkillList(b.Context(), &p)
				if err != nil || len(res.Items) == 0 {
					b.Fatalf("%d items, err %v", len(res.Items), err)
				}
			}
		})
	}
}

func benchTaskLogAppend(b *testing.B, open func(b *testing.B) store.Store) {
	s := open(b)
	ws, err := s.WorkspaceCreate(b.Context(), &store.WorkspaceCreateParams{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	task, err := s.TaskCreate(b.Context(), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"})
	if err != nil {
		b.Fatal(err)
	}
	payload := json.RawMessage(`{"role":"assistant","content":"A typical message of a few hundred bytes, as the runtime appends it to the log of a task while it runs."}`)
	for b.Loop() {
		if _, err := s.TaskLogAppend(b.Context(), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "message", Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSkillUsageSummary measures summing the skill usage of a workspace
// of 10,000 indexed tasks with 5 skills each (50,000 rows), for one agent
// of two, into its groups.
func benchSkillUsageSummary(b *testing.B, open func(b *testing.B) store.Store) {
	s := open(b)
	ws, err := s.WorkspaceCreate(b.Context(), &store.WorkspaceCreateParams{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	created := time.Now().UTC()
	for start := 0; start < 10_000; start += 1000 {
		err := s.Tx(b.Context(), func(q store.Querier) error {
			for i := start; i < start+1000; i++ {
				task, err := q.TaskCreate(b.Context(), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"})
				if err != nil {
					return err
				}
				rows := make([]store.SkillUsage, 5)
				for k := range rows {
					rows[k] = store.SkillUsage{WorkspaceID: ws.ID, AgentID: fmt.Sprint("agent-", i%2), CreatedAt: created,
						SkillUse: store.SkillUse{SkillID: fmt.Sprint("skill-", (i+k)%20), Name: "s", Version: 1 + i%3, Digest: "sha256:x",
							Offer: []string{"full", "shortened", "name_only"}[i%3], Activations: i % 2, FirstIteration: i%2 - 1, Outcome: "completed"}}
				}
				if err := q.SkillUsageReplace(b.Context(), &store.SkillUsageReplaceParams{TaskID: task.ID, Seq: 1, Rows: rows}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		groups, err := s.SkillUsageSummary(b.Context(), &store.SkillUsageSummaryParams{WorkspaceID: ws.ID, AgentID: "agent-1"})
		if err != nil || len(groups) == 0 {
			b.Fatal(len(groups), err)
		}
	}
}
