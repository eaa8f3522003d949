package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func testTasks(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	ag := must[*skilld.Agent](t)(s.AgentCreate(ctx(t), &store.AgentCreateParams{WorkspaceID: ws.ID, Name: "a"}))
	snapshot := json.RawMessage(`{"skills":[{"name":"x","digest":"sha256:00"}]}`)
	task := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, AgentID: ag.ID, Input: "do it", Config: snapshot, CreatedBy: "ada"}))
	if task.Status != skilld.TaskQueued || task.LastSeq != 0 || task.AgentID != ag.ID {
		t.Fatalf("task %+v", task)
	}
	var cfg map[string]any
	if err := json.Unmarshal(task.Config, &cfg); err != nil || cfg["skills"] == nil {
		t.Errorf("config snapshot %s (%v)", task.Config, err)
	}
	started := time.Now().UTC().Truncate(time.Microsecond)
	run := must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: task.ID, ExpectedStatus: skilld.TaskQueued, Status: skilld.TaskRunning, StartedAt: &started}))
	if run.Status != skilld.TaskRunning || !run.StartedAt.Equal(started) {
		t.Errorf("running %+v", run)
	}
	_, err := s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: task.ID, ExpectedStatus: skilld.TaskQueued, Status: skilld.TaskRunning})
	wantCode(t, err, skilld.ECONFLICT)
	_, err = s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: "missing", Status: skilld.TaskFailed})
	wantCode(t, err, skilld.ENOTFOUND)

	// Counts by status span workspaces.
	ws2 := newWorkspace(t, s, "w2")
	for range 2 {
		must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws2.ID, Input: "x", Status: skilld.TaskQueued}))
	}
	byStatus := must[map[skilld.TaskStatus]int](t)(s.TaskCountByStatus(ctx(t)))
	if byStatus[skilld.TaskRunning] != 1 || byStatus[skilld.TaskQueued] != 2 || len(byStatus) != 2 {
		t.Errorf("counts by status %v, want 1 running and 2 queued", byStatus)
	}

	for i := 1; i <= 3; i++ {
		e := must[*skilld.TaskLogEntry](t)(s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "message", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}))
		if e.Seq != int64(i) {
			t.Fatalf("seq %d, want %d", e.Seq, i)
		}
	}
	_, err = s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: "missing", Kind: "x"})
	wantCode(t, err, skilld.ENOTFOUND)
	// A writer that expects a sequence number is fenced: the log moved on.
	_, err = s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "x", Payload: json.RawMessage(`{}`), ExpectSeq: 3})
	if wantCode(t, err, skilld.ECONFLICT); !errors.Is(err, store.ErrLogMoved) {
		t.Errorf("a stale append: %v", err)
	}
	_, err = s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: "missing", Kind: "x", ExpectSeq: 1})
	wantCode(t, err, skilld.ENOTFOUND)
	fenced := must[*skilld.TaskLogEntry](t)(s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "message", Payload: json.RawMessage(`{"n":4}`), ExpectSeq: 4}))
	if fenced.Seq != 4 {
		t.Fatalf("append at 4 got seq %d", fenced.Seq)
	}
	log := must[[]*skilld.TaskLogEntry](t)(s.TaskLogList(ctx(t), &store.TaskLogListParams{TaskID: task.ID, AfterSeq: 1}))
	if len(log) != 3 || log[0].Seq != 2 || string(log[1].Payload) != `{"n": 3}` && string(log[1].Payload) != `{"n":3}` {
		t.Errorf("log after 1: %+v", log)
	}
	errText, errCode := "model unreachable", skilld.EUNAVAILABLE
	done := time.Now().UTC()
	fin := must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: task.ID, Status: skilld.TaskFailed, Error: &errText, ErrorCode: &errCode, FinishedAt: &done}))
	if fin.Status != skilld.TaskFailed || fin.Error == nil || *fin.Error != (skilld.TaskError{Code: errCode, Message: errText}) || fin.FinishedAt == nil || fin.LastSeq != 4 {
		t.Errorf("finished %+v", fin)
	}

	other := newWorkspace(t, s, "other")
	_, err = s.TaskGet(ctx(t), &store.TaskGetParams{WorkspaceID: other.ID, ID: task.ID})
	wantCode(t, err, skilld.ENOTFOUND)
	second := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "no agent"}))
	tasks, total, err := s.TaskList(ctx(t), &store.TaskListParams{WorkspaceID: ws.ID})
	if err != nil || total != 2 || tasks[0].ID != second.ID {
		t.Errorf("newest first: total %d, err %v", total, err)
	}
	tasks, total, _ = s.TaskList(ctx(t), &store.TaskListParams{WorkspaceID: ws.ID, AgentID: ag.ID, Status: skilld.TaskFailed})
	if total != 1 || tasks[0].ID != task.ID || tasks[0].Error == nil || tasks[0].Error.Code != errCode {
		t.Errorf("filtered: total %d, %+v", total, tasks)
	}
	t.Run("Results", func(t *testing.T) { testTaskResults(t, open) })
}

// testTaskResults: what a task came to is in its row. Usage is added by
// the appends that log model calls — in their transaction, so a refused
// (fenced) append adds nothing — and the output and error are what the
// end recorded; a task reads the same from TaskGet and TaskList.
func testTaskResults(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	task := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"}))
	if task.Usage != (skilld.TaskUsage{}) || task.Output != "" || task.Error != nil {
		t.Fatalf("a new task %+v", task)
	}
	appends := []store.TaskLogAppendParams{
		{Kind: "event", PromptTokens: 120, CompletionTokens: 9, ExpectSeq: 1},
		{Kind: "message", ExpectSeq: 2},
		{Kind: "event", PromptTokens: 300, CompletionTokens: 41},
	}
	for _, p := range appends {
		p.TaskID, p.Payload = task.ID, json.RawMessage(`{}`)
		must[*skilld.TaskLogEntry](t)(s.TaskLogAppend(ctx(t), &p))
	}
	// A stale writer's call is not counted: its entry is not in the log.
	_, err := s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "event", Payload: json.RawMessage(`{}`), ExpectSeq: 2, PromptTokens: 1000})
	wantCode(t, err, skilld.ECONFLICT)
	_, err = s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "event", Payload: json.RawMessage(`{}`), CompletionTokens: -1})
	wantCode(t, err, skilld.EINVALID)
	want := skilld.TaskUsage{PromptTokens: 420, CompletionTokens: 50, TotalTokens: 470}
	if got := must[*skilld.Task](t)(s.TaskGet(ctx(t), &store.TaskGetParams{ID: task.ID})); got.Usage != want || got.LastSeq != 3 {
		t.Errorf("usage %+v at entry %d, want %+v at 3", got.Usage, got.LastSeq, want)
	}

	output, none := "42 rows", ""
	fin := must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: task.ID, Status: skilld.TaskCompleted, Output: &output, Error: &none, ErrorCode: &none}))
	if fin.Output != output || fin.Error != nil || fin.Usage != want {
		t.Errorf("completed %+v", fin)
	}
	msg, code := "cancelled by ada", skilld.TaskCancelledCode
	other := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "y"}))
	must[*skilld.Task](t)(s.TaskUpdate(ctx(t), &store.TaskUpdateParams{ID: other.ID, Status: skilld.TaskCancelled, Error: &msg, ErrorCode: &code}))
	tasks, _, err := s.TaskList(ctx(t), &store.TaskListParams{WorkspaceID: ws.ID})
	if err != nil || len(tasks) != 2 {
		t.Fatalf("list: %v, %v", tasks, err)
	}
	if c, d := tasks[0], tasks[1]; c.Error == nil || *c.Error != (skilld.TaskError{Code: code, Message: msg}) || c.Usage != (skilld.TaskUsage{}) ||
		d.Output != output || d.Usage != want || d.Error != nil {
		t.Errorf("listed %+v and %+v", c, d)
	}
}

// testConcurrentTaskLog has 8 appenders write to one task's log at once:
// the sequence must be exactly 1…N with no gaps and no duplicates.
func testConcurrentTaskLog(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	task := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x"}))
	const appenders, each = 8, 25
	concurrently(t, appenders, each, func(a, i int) error {
		_, err := s.TaskLogAppend(ctx(t), &store.TaskLogAppendParams{TaskID: task.ID, Kind: "event",
			Payload: json.RawMessage(fmt.Sprintf(`{"a":%d,"i":%d}`, a, i))})
		return err
	})
	log := must[[]*skilld.TaskLogEntry](t)(s.TaskLogList(ctx(t), &store.TaskLogListParams{TaskID: task.ID}))
	if len(log) != appenders*each {
		t.Fatalf("%d entries, want %d", len(log), appenders*each)
	}
	for i, e := range log {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
	if got := must[*skilld.Task](t)(s.TaskGet(ctx(t), &store.TaskGetParams{ID: task.ID})); got.LastSeq != appenders*each {
		t.Errorf("last_seq %d", got.LastSeq)
	}
}

func testEvents(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	other := newWorkspace(t, s, "other")
	var ids []int64
	for i := range 3 {
		e := must[*skilld.Event](t)(s.EventAppend(ctx(t), &store.EventAppendParams{WorkspaceID: ws.ID, Kind: "skill.created", Subject: fmt.Sprint(i), Actor: "ada"}))
		ids = append(ids, e.ID)
	}
	must[*skilld.Event](t)(s.EventAppend(ctx(t), &store.EventAppendParams{WorkspaceID: other.ID, Kind: "x"}))
	got := must[[]*skilld.Event](t)(s.EventList(ctx(t), &store.EventListParams{WorkspaceID: ws.ID, AfterID: ids[0]}))
	if len(got) != 2 || got[0].ID != ids[1] || got[1].Subject != "2" || got[0].Actor != "ada" {
		t.Errorf("events after the first: %+v", got)
	}
}

// testTaskPackages: an unfinished task pins its snapshot's packages: they
// count as referenced and cannot be deleted until the task releases them;
// a task naming a missing package is refused whole.
func testTaskPackages(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	digest := "sha256:" + fmt.Sprintf("%064d", 77)
	must[*store.PackageCreateResult](t)(s.PackageCreate(ctx(t), &store.PackageCreateParams{Digest: digest, Manifest: []byte("m\n"), Size: 1,
		Files: []skilld.PackageFile{{Path: "SKILL.md", Digest: "sha256:" + fmt.Sprintf("%064d", 78), Size: 1}}}))
	task := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "x", Packages: []string{digest, digest}}))
	used := must[map[string]bool](t)(s.PackageReferenced(ctx(t), &store.PackageReferencedParams{Digests: []string{digest}}))
	if !used[digest] {
		t.Error("a pinned package is not referenced")
	}
	wantCode(t, s.PackageDelete(ctx(t), &store.PackageDeleteParams{Digest: digest}), skilld.EINVALID)
	released := must[[]string](t)(s.TaskPackagesRelease(ctx(t), &store.TaskPackagesReleaseParams{TaskID: task.ID}))
	if len(released) != 1 || released[0] != digest {
		t.Errorf("released %v", released)
	}
	if again := must[[]string](t)(s.TaskPackagesRelease(ctx(t), &store.TaskPackagesReleaseParams{TaskID: task.ID})); len(again) != 0 {
		t.Errorf("released twice: %v", again)
	}
	if err := s.PackageDelete(ctx(t), &store.PackageDeleteParams{Digest: digest}); err != nil {
		t.Errorf("deleting the released package: %v", err)
	}
	_, err := s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "orphan", Packages: []string{"sha256:" + fmt.Sprintf("%064d", 79)}})
	wantCode(t, err, skilld.EINVALID)
	if _, total, _ := s.TaskList(ctx(t), &store.TaskListParams{WorkspaceID: ws.ID}); total != 1 {
		t.Errorf("a refused task left a row: %d tasks", total)
	}
}

// testTaskOutputs: a task's outputs are its own, and they count as blob
// references.
func testTaskOutputs(t *testing.T, open Opener) {
	s := open(t)
	ws := newWorkspace(t, s, "w")
	a := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "a"}))
	b := must[*skilld.Task](t)(s.TaskCreate(ctx(t), &store.TaskCreateParams{WorkspaceID: ws.ID, Input: "b"}))
	out := "sha256:" + fmt.Sprintf("%064d", 91)
	for range 2 {
		if err := s.TaskOutputAdd(ctx(t), &store.TaskOutputParams{TaskID: a.ID, Digest: out}); err != nil {
			t.Fatal(err)
		}
	}
	if ok := must[bool](t)(s.TaskOutputExists(ctx(t), &store.TaskOutputParams{TaskID: a.ID, Digest: out})); !ok {
		t.Error("task a does not have its output")
	}
	if ok := must[bool](t)(s.TaskOutputExists(ctx(t), &store.TaskOutputParams{TaskID: b.ID, Digest: out})); ok {
		t.Error("task b has task a's output")
	}
	if used := must[map[string]bool](t)(s.BlobReferenced(ctx(t), &store.BlobReferencedParams{Digests: []string{out}})); !used[out] {
		t.Error("an output is not a blob reference")
	}
	wantCode(t, s.TaskOutputAdd(ctx(t), &store.TaskOutputParams{TaskID: "missing", Digest: out}), skilld.ENOTFOUND)
}

// concurrently runs fn(a, i) for i = 0…each-1 in each of n goroutines a at
// once; an error stops its goroutine and fails the test.
func concurrently(t *testing.T, n, each int, fn func(a, i int) error) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for a := range n {
		wg.Go(func() {
			for i := range each {
				if err := fn(a, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
