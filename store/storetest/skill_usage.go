package storetest

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// testSkillUsage: finished tasks whose log is past their mark are pending
// (unfinished ones and indexed ones are not); a replace writes the rows
// and moves the mark in one step, refuses a mark that moved (writing
// nothing) and replaces the rows of a task indexed again; the summary
// groups rows by skill, version, offer, rule, outcome and reasons within
// an agent and a time range; deleting the task deletes its rows.
func testSkillUsage(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	newTask := func(w *skilld.Workspace, status skilld.TaskStatus, entries int) *skilld.Task {
		t.Helper()
		task := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: w.ID, Input: "x"}))
		for range entries {
			must[*skilld.TaskLogEntry](t)(s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "event", Payload: json.RawMessage(`{}`)}))
		}
		fin := time.Now().UTC()
		return must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: task.ID, Status: status, FinishedAt: &fin}))
	}
	done := newTask(ws, skilld.TaskCompleted, 3)
	failed := newTask(ws, skilld.TaskFailed, 2)
	newTask(ws, skilld.TaskRunning, 2)   // running: not yet
	newTask(ws, skilld.TaskCancelled, 0) // no log: nothing to read
	elsewhere := newTask(other, skilld.TaskCompleted, 1)

	pending := func(wsID string) []string {
		t.Helper()
		var ids []string
		for _, p := range must[[]store.SkillUsageTask](t)(s.SkillUsagePending(ctx(t), &store.SkillUsagePendingParams{WorkspaceID: wsID})) {
			ids = append(ids, p.ID)
		}
		return ids
	}
	if got, want := pending(ws.ID), []string{done.ID, failed.ID}; !slices.Equal(got, want) {
		t.Fatalf("pending = %v, want %v", got, want)
	}
	if got := pending(""); len(got) != 3 || !slices.Contains(got, elsewhere.ID) {
		t.Fatalf("pending in every workspace = %v, want 3 with %s", got, elsewhere.ID)
	}
	if got := must[[]store.SkillUsageTask](t)(s.SkillUsagePending(ctx(t), &store.SkillUsagePendingParams{Limit: 1})); len(got) != 1 {
		t.Fatalf("a limit of 1 gave %d tasks", len(got))
	}

	created := done.CreatedAt
	row := func(skill, offer, outcome string, activations, first int) store.SkillUsage {
		return store.SkillUsage{WorkspaceID: ws.ID, AgentID: "a1", CreatedAt: created, FinishedAt: done.FinishedAt, SkillUse: store.SkillUse{SkillID: skill,
			Name: "name-" + skill, Version: 1, Digest: "sha256:1", Offer: offer, Activations: activations, FirstIteration: first, Outcome: outcome}}
	}
	refused := row("s2", "shortened", "completed", 0, -1)
	refused.Refusals, refused.RefusalReasons = 2, map[string]int{"it needs N tokens": 2}
	rows := []store.SkillUsage{row("s1", "full", "completed", 2, 3), refused}
	if err := s.SkillUsageReplace(ctx(t), &store.SkillUsageReplaceParams{TaskID: done.ID, ExpectSeq: 0, Seq: 3, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	// A second indexer that read the same mark writes nothing.
	err := s.SkillUsageReplace(ctx(t), &store.SkillUsageReplaceParams{TaskID: done.ID, ExpectSeq: 0, Seq: 3, Rows: rows[:1]})
	if wantCode(t, err, skilld.ECONFLICT); !errors.Is(err, store.ErrUsageMoved) {
		t.Fatalf("a replace from a stale mark: %v", err)
	}
	// Rows naming one skill twice are refused whole: the mark stays.
	err = s.SkillUsageReplace(ctx(t), &store.SkillUsageReplaceParams{TaskID: failed.ID, Seq: 2, Rows: []store.SkillUsage{rows[0], rows[0]}})
	wantCode(t, err, skilld.EINVALID)
	err = s.SkillUsageReplace(ctx(t), &store.SkillUsageReplaceParams{TaskID: "no-such-task", Seq: 2})
	wantCode(t, err, skilld.ENOTFOUND)
	if got, want := pending(ws.ID), []string{failed.ID}; !slices.Equal(got, want) {
		t.Fatalf("pending after indexing = %v, want %v", got, want)
	}
	failedRow := row("s1", "full", "failed", 1, 1)
	if err := s.SkillUsageReplace(ctx(t), &store.SkillUsageReplaceParams{TaskID: failed.ID, Seq: 2, Rows: []store.SkillUsage{failedRow}}); err != nil {
		t.Fatal(err)
	}

	summary := func(p store.SkillUsageSummaryParams) map[string]store.SkillUsageGroup {
		t.Helper()
		out := map[string]store.SkillUsageGroup{}
		for _, g := range must[[]store.SkillUsageGroup](t)(s.SkillUsageSummary(ctx(t), &p)) {
			out[g.SkillID+"/"+g.Outcome] = g
		}
		return out
	}
	got := summary(store.SkillUsageSummaryParams{WorkspaceID: ws.ID})
	want := map[string]store.SkillUsageGroup{
		"s1/completed": {SkillID: "s1", Name: "name-s1", Version: 1, Digest: "sha256:1", Offer: "full", Outcome: "completed", Tasks: 1, TasksActivated: 1, FirstIterations: 3, Activations: 2},
		"s1/failed":    {SkillID: "s1", Name: "name-s1", Version: 1, Digest: "sha256:1", Offer: "full", Outcome: "failed", Tasks: 1, TasksActivated: 1, FirstIterations: 1, Activations: 1},
		"s2/completed": {SkillID: "s2", Name: "name-s2", Version: 1, Digest: "sha256:1", Offer: "shortened", Outcome: "completed", Tasks: 1, Refusals: 2, RefusalReasons: map[string]int{"it needs N tokens": 2}},
	}
	checkGroups(t, got, want)
	if got := summary(store.SkillUsageSummaryParams{WorkspaceID: ws.ID, SkillID: "s2"}); len(got) != 1 || got["s2/completed"].Refusals != 2 {
		t.Errorf("skill s2's summary = %v", got)
	}
	if got := summary(store.SkillUsageSummaryParams{WorkspaceID: ws.ID, AgentID: "a2"}); len(got) != 0 {
		t.Errorf("another agent's summary = %v, want none", got)
	}
	if got := summary(store.SkillUsageSummaryParams{WorkspaceID: ws.ID, From: created.Add(time.Second)}); len(got) != 0 {
		t.Errorf("a summary from after the tasks = %v, want none", got)
	}
	if got := summary(store.SkillUsageSummaryParams{WorkspaceID: ws.ID, From: created, To: created.Add(time.Second)}); len(got) != 3 {
		t.Errorf("a summary around the tasks has %d groups, want 3", len(got))
	}
	if got := summary(store.SkillUsageSummaryParams{WorkspaceID: other.ID}); len(got) != 0 {
		t.Errorf("another workspace's summary = %v, want none", got)
	}

	// A task run again is indexed again: its rows are replaced.
	must[*skilld.TaskLogEntry](t)(s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: done.ID, Kind: "event", Payload: json.RawMessage(`{}`)}))
	if got := pending(ws.ID); !slices.Equal(got, []string{done.ID}) {
		t.Fatalf("pending after a task's log moved = %v", got)
	}
	if err := s.SkillUsageReplace(ctx(t), &store.SkillUsageReplaceParams{TaskID: done.ID, ExpectSeq: 3, Seq: 4, Rows: rows[1:]}); err != nil {
		t.Fatal(err)
	}
	got = summary(store.SkillUsageSummaryParams{WorkspaceID: ws.ID})
	delete(want, "s1/completed")
	checkGroups(t, got, want)

	if _, err := s.TaskDelete(ctx(t), &store.TaskDeleteParams{ID: done.ID}); err != nil {
		t.Fatal(err)
	}
	got = summary(store.SkillUsageSummaryParams{WorkspaceID: ws.ID})
	delete(want, "s2/completed")
	checkGroups(t, got, want)
}

func checkGroups(t *testing.T, got, want map[string]store.SkillUsageGroup) {
	t.Helper()
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("groups %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for k, w := range want {
		if g := got[k]; !reflect.DeepEqual(g, w) {
			t.Errorf("group %s = %+v, want %+v", k, g, w)
		}
	}
}
