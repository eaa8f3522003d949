package executor_test

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// playModel answers each request with the next function's response.
type playModel struct {
	mu    sync.Mutex
	steps []func(ctx context.Context, req *model.Request) (*model.Response, error)
	n     int
}

func (m *playModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		m.mu.Lock()
		if m.n >= len(m.steps) {
			m.mu.Unlock()
			yield(nil, skilld.Errorf(skilld.EINVALID, "no more steps"))
			return
		}
		step := m.steps[m.n]
		m.n++
		m.mu.Unlock()
		resp, err := step(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		resp.Message.Role = model.RoleAssistant
		yield(&model.Chunk{Response: resp}, nil)
	}
}

func call(name string, args any) func(context.Context, *model.Request) (*model.Response, error) {
	return func(context.Context, *model.Request) (*model.Response, error) {
		b, _ := json.Marshal(args)
		return &model.Response{Message: model.Message{ToolCalls: []model.ToolCall{{ID: "c-" + name, Name: name, Arguments: b}}}, StopReason: model.StopToolCalls}, nil
	}
}

func answer(text string) func(context.Context, *model.Request) (*model.Response, error) {
	return func(context.Context, *model.Request) (*model.Response, error) {
		return &model.Response{Message: model.Message{Content: text}, StopReason: model.StopEnd}, nil
	}
}

type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) + 1 }

type fixture struct {
	svc   *service.Service
	exec  *executor.Local
	db    store.Store
	actor service.Actor
	data  string
	model *playModel
	// sandboxes holds the tasks' sandboxes, kept after each task.
	sandboxes string
	// blobDir holds the blob store's files.
	blobDir string
	sbx     sandbox.Provider
}

func newFixture(t *testing.T, open storetest.Opener) *fixture {
	return newFixtureWith(t, open, nil)
}

// newFixtureWith lets a test change the executor's config (its sandbox
// settings); by default sandboxes are kept for the test to look into.
func newFixtureWith(t *testing.T, open storetest.Opener, adjust func(*executor.Config)) *fixture {
	return newFixtureOf(t, open, adjust, service.Config{})
}

// newFixtureOf is newFixtureWith with the service's configuration (its
// Executor is the fixture's).
func newFixtureOf(t *testing.T, open storetest.Opener, adjust func(*executor.Config), svcCfg service.Config) *fixture {
	db := open(t)
	blobDir := t.TempDir()
	blobs, err := fsblob.New(blobDir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, data: t.TempDir(), model: &playModel{}, blobDir: blobDir}
	sbx, sbCfg := bwraptest.New(t)
	f.sandboxes, f.sbx = sbCfg.Root, sbx
	cfg := executor.Config{DB: db, Blobs: blobs, Sandboxes: sbx, KeepSandboxes: true,
		OpenModel: func(ref string) (model.Model, string, error) { return f.model, strings.TrimPrefix(ref, "test:"), nil },
		Tokenizer: func(string) (agent.Counter, error) { return words{}, nil },
		Window:    func(string) (int, bool) { return 100000, true },
	}
	if adjust != nil {
		adjust(&cfg)
	}
	svcCfg.Executor = func(svc *service.Service) service.Executor {
		cfg.Service = svc
		f.exec = executor.New(cfg)
		return f.exec
	}
	f.svc = service.New(db, blobs, nil, svcCfg)
	t.Cleanup(f.exec.Shutdown)
	secret, err := f.svc.Bootstrap(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if f.actor, err = f.svc.Authenticate(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	return f
}

// agentWithSkill stores the csv-inspector example and an agent using it.
func (f *fixture) agentWithSkill(t *testing.T, tools skilld.ToolPolicy) (*skilld.Agent, *service.SkillView) {
	t.Helper()
	p, err := pack.ReadDir(t.Context(), filepath.Join("..", "examples", "skills", "csv-inspector"), pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, fl := range p.Files() {
		files[fl.Path] = string(fl.Data)
	}
	sk, err := f.svc.CreateSkill(t.Context(), f.actor, service.CreateSkillParams{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "analyst",
		Config: skilld.AgentConfig{Model: "test:m", Instruction: "Analyse.", Tools: tools}, Skills: []service.AgentSkillRef{{Skill: sk.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	return ag, sk
}

func (f *fixture) wait(t *testing.T, id string, want skilld.TaskStatus) *skilld.Task {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		task, err := f.svc.GetTask(t.Context(), f.actor, service.GetTaskParams{TaskRef: service.TaskRef{ID: id}})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status == want {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s (%+v), want %s", id, task.Status, task.Error, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunTask(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			f := newFixture(t, d.Open)
			ag, sk := f.agentWithSkill(t, skilld.ToolPolicy{})
			f.model.steps = append(f.model.steps, call(agent.ActivateSkill, map[string]string{"skill_name": "csv-inspector"}), answer("Done."))
			task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.Name}, Input: "Summarize data.csv"})
			if err != nil {
				t.Fatal(err)
			}
			done := f.wait(t, task.ID, skilld.TaskCompleted)
			if done.FinishedAt == nil || done.StartedAt == nil || done.LastSeq == 0 {
				t.Errorf("finished task %+v", done)
			}
			snap, err := service.TaskSnapshot(done)
			if err != nil || len(snap.Skills) != 1 || snap.Skills[0].Digest != sk.Digest || snap.Skills[0].Version != 1 {
				t.Fatalf("snapshot %+v %v", snap, err)
			}
			// The headings search_skills matches come with the snapshot.
			if h := snap.Skills[0].Headings; !slices.Equal(h, []string{"CSV inspector", "Steps", "Limits"}) {
				t.Errorf("snapshot headings %q", h)
			}
			log, err := f.svc.TaskEvents(t.Context(), f.actor, service.TaskEventsParams{TaskRef: service.TaskRef{ID: task.ID}})
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for i, e := range log {
				if e.Seq != int64(i+1) {
					t.Fatalf("log seq %d at %d", e.Seq, i)
				}
				if e.Kind == agent.KindEvent {
					var ev agent.Event
					json.Unmarshal(e.Payload, &ev)
					types = append(types, ev.Type)
					switch p := ev.Payload.(type) {
					case agent.SkillMaterialized:
						if p.Error != "" || p.Dir != pack.SandboxDir(sk.Name, sk.ID) {
							t.Errorf("materialization: %+v", p)
						}
					case agent.SandboxReady:
						if p.Provider != "bwrap" || !p.Isolated {
							t.Errorf("sandbox: %+v", p)
						}
					}
				}
			}
			joined := strings.Join(types, " ")
			for _, want := range []string{"task.started", "sandbox.ready", "skill.materialized", "skill.activated", "task.completed"} {
				if !strings.Contains(joined, want) {
					t.Errorf("log lacks %s: %s", want, joined)
				}
			}
		})
	}
}

func TestApprovalAndCancel(t *testing.T) {
	f := newFixture(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) })
	ag, _ := f.agentWithSkill(t, skilld.ToolPolicy{RequireApproval: []string{"write_file"}})
	blocked := make(chan struct{})
	f.model.steps = append(f.model.steps,
		call(agent.ToolWriteFile, map[string]string{"path": "out.txt", "content": "hello"}),
		answer("written"),
		call(agent.ToolWriteFile, map[string]string{"path": "second.txt", "content": "x"}),
		answer("refused, fine"),
		func(ctx context.Context, _ *model.Request) (*model.Response, error) {
			close(blocked)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	)
	start := func() *skilld.Task {
		task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "write"})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	task := start()
	f.wait(t, task.ID, skilld.TaskWaitingForApproval)
	if _, err := f.svc.DecideApproval(t.Context(), f.actor, service.DecideApprovalParams{TaskRef: service.TaskRef{ID: task.ID}, CallID: "nope", Approved: true}); skilld.ErrorCode(err) != skilld.ENOTFOUND {
		t.Errorf("unknown call: %v", err)
	}
	if _, err := f.svc.DecideApproval(t.Context(), f.actor, service.DecideApprovalParams{TaskRef: service.TaskRef{ID: task.ID}, CallID: "c-write_file", Approved: true}); err != nil {
		t.Fatal(err)
	}
	f.wait(t, task.ID, skilld.TaskCompleted)
	if b, _ := os.ReadFile(filepath.Join(f.sandboxes, task.ID, "workspace", "out.txt")); string(b) != "hello" {
		t.Errorf("approved write: %q", b)
	}

	rejected := start()
	f.wait(t, rejected.ID, skilld.TaskWaitingForApproval)
	if _, err := f.svc.DecideApproval(t.Context(), f.actor, service.DecideApprovalParams{TaskRef: service.TaskRef{ID: rejected.ID}, CallID: "c-write_file"}); err != nil {
		t.Fatal(err)
	}
	f.wait(t, rejected.ID, skilld.TaskCompleted)
	if _, err := os.Stat(filepath.Join(f.sandboxes, rejected.ID, "workspace", "second.txt")); !os.IsNotExist(err) {
		t.Error("a rejected write happened")
	}

	long := start()
	<-blocked
	if _, err := f.svc.CancelTask(t.Context(), f.actor, service.CancelTaskParams{TaskRef: service.TaskRef{ID: long.ID}}); err != nil {
		t.Fatal(err)
	}
	done := f.wait(t, long.ID, skilld.TaskCancelled)
	if done.FinishedAt == nil {
		t.Errorf("cancelled task %+v", done)
	}
	if _, err := f.svc.CancelTask(t.Context(), f.actor, service.CancelTaskParams{TaskRef: service.TaskRef{ID: long.ID}}); err != nil {
		t.Errorf("cancelling a finished task again: %v", err)
	}
}

func TestFailures(t *testing.T) {
	f := newFixture(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) })
	noModel, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "no-model"})
	if err != nil || len(noModel.Warnings) != 1 || !strings.Contains(noModel.Warnings[0].Message, "has no model") {
		t.Fatalf("created %+v (%v), want a warning", noModel, err)
	}
	// A task that could not run is refused at its start, not failed later.
	_, err = f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: noModel.ID}, Input: "x"})
	if skilld.ErrorCode(err) != skilld.EINVALID || skilld.ErrorMessage(err) != noModel.Warnings[0].Message {
		t.Errorf("starting a task of an agent without a model: %v", err)
	}
	if _, total, _ := f.db.TaskList(t.Context(), &store.TaskListParams{WorkspaceID: f.actor.WorkspaceID}); total != 0 {
		t.Errorf("a refused start recorded %d tasks", total)
	}
	f.model.steps = append(f.model.steps, func(context.Context, *model.Request) (*model.Response, error) {
		return nil, skilld.Errorf(skilld.ERATELIMITED, "provider rate limit")
	})
	ag, _ := f.agentWithSkill(t, skilld.ToolPolicy{})
	task, _ := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "x"})
	failed := f.wait(t, task.ID, skilld.TaskFailed)
	if failed.Error == nil || *failed.Error != (skilld.TaskError{Code: skilld.ERATELIMITED, Message: "provider rate limit"}) {
		t.Errorf("error %+v", failed.Error)
	}
	// Tasks left running by a previous process are picked up on recovery,
	// more than a page of them: these have no snapshot, so resuming them
	// fails them for that.
	var orphans []*skilld.Task
	for range store.MaxPageSize + 1 {
		orphan, err := f.db.TaskCreate(t.Context(), &store.TaskCreateParams{WorkspaceID: f.actor.WorkspaceID, Input: "x", Status: skilld.TaskRunning})
		if err != nil {
			t.Fatal(err)
		}
		orphans = append(orphans, orphan)
	}
	if err := f.exec.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Wait for every run rather than polling one task against a clock: a
	// thousand resumes under -race on a busy machine take a while.
	f.exec.Wait()
	for _, orphan := range []*skilld.Task{orphans[0], orphans[len(orphans)-1]} {
		got, err := f.svc.GetTask(t.Context(), f.actor, service.GetTaskParams{TaskRef: service.TaskRef{ID: orphan.ID}})
		if err != nil || got.Status != skilld.TaskFailed || got.Error == nil || got.Error.Code != skilld.EINVALID || !strings.Contains(got.Error.Message, "has no model") {
			t.Errorf("recovered %+v (%v)", got, err)
		}
	}
	if _, total, err := f.db.TaskList(t.Context(), &store.TaskListParams{WorkspaceID: f.actor.WorkspaceID, Status: skilld.TaskRunning}); err != nil || total != 0 {
		t.Errorf("%d tasks still running after recovery (%v)", total, err)
	}
}

// An agent whose timeout is longer than the server's --task-timeout is
// saved with a warning that says its tasks stop at the server's limit;
// within the limit, no warning.
func TestTimeoutPastServerLimitWarns(t *testing.T) {
	f := newFixtureWith(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) }, func(c *executor.Config) { c.TaskTimeout = 2 * time.Second })
	ag, err := f.svc.CreateAgent(t.Context(), f.actor, service.AgentParams{Name: "greedy", Config: skilld.AgentConfig{Model: "test:m", Timeout: "1h"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ag.Warnings) != 1 || ag.Warnings[0].Field != "config.timeout" || !strings.Contains(ag.Warnings[0].Message, "stop after 2s") {
		t.Errorf("warnings %+v", ag.Warnings)
	}
	up, err := f.svc.UpdateAgent(t.Context(), f.actor, service.UpdateAgentParams{AgentRef: service.AgentRef{ID: ag.ID}, Config: json.RawMessage(`{"timeout":"2s"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Warnings) != 0 {
		t.Errorf("warnings of an agent within the limit: %+v", up.Warnings)
	}
}
