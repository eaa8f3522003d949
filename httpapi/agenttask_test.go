package httpapi_test

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/provider"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// TestAgentPatchMerges: PATCH of an agent is a JSON Merge Patch (RFC
// 7396) of its config: objects merge, null removes a member, arrays and
// scalars replace; what is left out stays.
func TestAgentPatchMerges(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		base := "/v1/workspaces/default/agents"
		e.must(201, "POST", base, e.admin, map[string]any{"name": "analyst", "config": map[string]any{
			"model": "openai:gpt-4o-mini", "instruction": "Be brief.", "timeout": "20m",
			"tools":   map[string]any{"denied": []string{"shell", "write_file"}},
			"context": map[string]any{"placement": "context", "max_loaded": 2},
			"sandbox": map[string]any{"env": map[string]string{"A": "1", "B": "2"}},
		}})
		got := e.must(200, "PATCH", base+"/analyst", e.admin, map[string]any{"config": map[string]any{"context": map[string]any{"window": 128000}}})
		cfg := got["config"].(map[string]any)
		if cfg["model"] != "openai:gpt-4o-mini" || cfg["instruction"] != "Be brief." || cfg["timeout"] != "20m" {
			t.Errorf("a patch of config.context wiped the rest: %v", cfg)
		}
		if ctxs := cfg["context"].(map[string]any); ctxs["window"] != 128000.0 || ctxs["placement"] != "context" || ctxs["max_loaded"] != 2.0 {
			t.Errorf("context after the patch: %v", ctxs)
		}

		got = e.must(200, "PATCH", base+"/analyst", e.admin, `{"config": {"instruction": null, "tools": {"denied": ["shell"]}, "sandbox": {"env": {"A": null, "C": "3"}}}}`)
		cfg = got["config"].(map[string]any)
		if _, ok := cfg["instruction"]; ok || cfg["model"] != "openai:gpt-4o-mini" {
			t.Errorf("null did not remove the instruction: %v", cfg)
		}
		if denied := cfg["tools"].(map[string]any)["denied"].([]any); len(denied) != 1 || denied[0] != "shell" {
			t.Errorf("an array is replaced, not merged: %v", denied)
		}
		if env := cfg["sandbox"].(map[string]any)["env"].(map[string]any); len(env) != 2 || env["B"] != "2" || env["C"] != "3" {
			t.Errorf("env after the patch: %v", env)
		}
		// The agent as stored is what the PATCH answered.
		if again := e.must(200, "GET", base+"/analyst", e.admin, nil); !sameJSON(t, again["config"], got["config"]) {
			t.Errorf("stored %v, answered %v", again["config"], got["config"])
		}

		// Refusals name the field and change nothing.
		for _, c := range []struct{ body, field string }{
			{`{"config": {"context": {"window": "big"}}}`, "config.context.window"},
			{`{"config": {"modle": "openai:gpt-4o"}}`, "config.modle"},
			{`{"config": {"context": {"placement": null}}}`, "config.context.max_loaded"}, // max_loaded needs context placement
			{`{"config": ["model"]}`, "config"},
		} {
			r := e.request("PATCH", base+"/analyst", e.admin, c.body)
			if r.status != 422 || r.errorCode(t) != skilld.EINVALID || r.errorField(t) != c.field {
				t.Errorf("PATCH %s: %d %s, want 422 naming %s", c.body, r.status, r.body, c.field)
			}
		}
		if again := e.must(200, "GET", base+"/analyst", e.admin, nil); !sameJSON(t, again["config"], got["config"]) {
			t.Errorf("a refused patch changed the agent: %v", again["config"])
		}
		// Name and skills replace as before; a null config resets it.
		got = e.must(200, "PATCH", base+"/analyst", e.admin, `{"name": "analyst-2", "config": null}`)
		if got["name"] != "analyst-2" || !sameJSON(t, got["config"], map[string]any{}) {
			t.Errorf("renamed and reset: %v", got)
		}
	})
}

// TestAgentNotFoundNamesWorkspace: a missing agent's message says where it
// was looked for.
func TestAgentNotFoundNamesWorkspace(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	e.must(201, "POST", "/v1/workspaces", e.admin, map[string]any{"name": "team"})
	for _, r := range []response{
		e.request("GET", "/v1/workspaces/team/agents/analyst", e.admin, nil),
		e.request("PATCH", "/v1/workspaces/team/agents/analyst", e.admin, map[string]any{"name": "x"}),
		e.request("POST", "/v1/workspaces/team/agents/analyst/tasks", e.admin, map[string]any{"input": "x"}),
		e.request("GET", "/v1/workspaces/team/tasks?agent=analyst", e.admin, nil),
	} {
		if r.status != 404 || r.errorMessage(t) != `agent "analyst" not found in workspace "team"` {
			t.Errorf("%d %s", r.status, r.body)
		}
	}
}

// serverModels opens models as skilld serve does — scripted models
// refused, providers through provider.Open with nothing in the
// environment — and answers every model it opens with m.
func serverModels(m model.Model) func(string) (model.Model, string, error) {
	return func(ref string) (model.Model, string, error) {
		r, err := model.ParseRef(ref)
		if err != nil {
			return nil, "", err
		}
		if r.Provider == model.ProviderScripted {
			return nil, "", skilld.Errorf(skilld.EFORBIDDEN, "scripted models are disabled on this server (set SKILLD_ALLOW_SCRIPTED_MODELS=1 for demos and tests)")
		}
		env := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"} // a local server: no key needed
		if _, err := provider.Open(ref, provider.Options{Getenv: func(k string) string { return env[k] }}); err != nil {
			return nil, "", err
		}
		return m, r.Name, nil
	}
}

// TestTaskStartRefusesModel: an agent whose model cannot run here is saved
// with a warning, and its tasks are refused at the start (422, the same
// message) with nothing created: no task, no sandbox. Fixed, it runs.
func TestTaskStartRefusesModel(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := &queueModel{}
	sbx, sbCfg := bwraptest.New(t)
	e.runTasks(executor.Config{DB: e.db, Blobs: e.svc.Packages().Blobs, Sandboxes: sbx,
		OpenModel: serverModels(m), Tokenizer: func(string) (agent.Counter, error) { return wordCount{}, nil }, Window: model.ContextWindow}, nil)
	base := "/v1/workspaces/default/agents"
	for _, c := range []struct{ name, model, field, says string }{
		{"demo", "scripted:demo.json", "config.model", `agent "demo" cannot use its model "scripted:demo.json" on this server: scripted models are disabled on this server (set SKILLD_ALLOW_SCRIPTED_MODELS=1`},
		{"odd", "mystery:x", "config.model", `unknown provider "mystery"; known providers: openai, anthropic, scripted`},
		{"keyless", "anthropic:claude-sonnet-4", "config.model", "no API key (set ANTHROPIC_API_KEY"},
		{"local", "openai:llama3.1", "config.context.window", `the context window of "openai:llama3.1" is not known; set config.context.window on agent "local"`},
		{"blank", "", "config.model", `agent "blank" has no model; set config.model`},
	} {
		name := c.name
		ag := e.must(201, "POST", base, e.admin, map[string]any{"name": name, "config": map[string]any{"model": c.model}})
		ws, _ := ag["warnings"].([]any)
		if len(ws) != 1 || ws[0].(map[string]any)["field"] != c.field || !strings.Contains(ws[0].(map[string]any)["message"].(string), c.says) {
			t.Errorf("%s: created with warnings %v, want one on %s saying %q", c.model, ag["warnings"], c.field, c.says)
			continue
		}
		warning := ws[0].(map[string]any)["message"].(string)
		r := e.request("POST", base+"/"+name+"/tasks", e.admin, map[string]any{"input": "go"})
		if r.status != 422 || r.errorCode(t) != skilld.EINVALID || r.errorMessage(t) != warning || r.errorField(t) != c.field {
			t.Errorf("%s: starting a task: %d %s, want 422 %q", c.model, r.status, r.body, warning)
		}
		if again := e.must(200, "GET", base+"/"+name, e.admin, nil); again["warnings"] != nil {
			t.Errorf("warnings are the answer of a change, not stored: %v", again)
		}
	}
	if tasks := e.must(200, "GET", "/v1/workspaces/default/tasks", e.admin, nil); tasks["total"] != 0.0 {
		t.Errorf("refused starts recorded tasks: %v", tasks)
	}
	if entries, err := bwraptest.Sandboxes(sbCfg.Root); err != nil || len(entries) != 0 {
		t.Errorf("refused starts made sandboxes: %v (%v)", entries, err)
	}
	// Fixed by a patch (no warning then), the agent's task runs.
	fixed := e.must(200, "PATCH", base+"/local", e.admin, map[string]any{"config": map[string]any{"context": map[string]any{"window": 32000}}})
	if fixed["warnings"] != nil {
		t.Errorf("a runnable agent has warnings: %v", fixed["warnings"])
	}
	m.push(final("ok"))
	task := e.must(201, "POST", base+"/local/tasks", e.admin, map[string]any{"input": "go"})
	waitTask(t, e, task["id"].(string), "completed")
	// A change that breaks it warns again.
	broken := e.must(200, "PATCH", base+"/local", e.admin, `{"config": {"context": {"window": null}}}`)
	if ws, _ := broken["warnings"].([]any); len(ws) != 1 {
		t.Errorf("removing the window: warnings %v", broken["warnings"])
	}
}

// TestTaskResultsOverHTTP: a task shows its output, usage and times once it
// completed, and its error once it failed, in tasks.get and tasks.list.
func TestTaskResultsOverHTTP(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		m := e.withExecutor(t)
		e.must(201, "POST", "/v1/workspaces/default/agents", e.admin, map[string]any{"name": "bot", "config": map[string]any{"model": "test:m"}})
		m.push(withUsage(toolCall("c1", agent.ToolListFiles, map[string]string{}), 100, 7))
		m.push(withUsage(final("The answer is 42."), 150, 12))
		started := e.must(201, "POST", "/v1/workspaces/default/agents/bot/tasks", e.admin, map[string]any{"input": "answer"})
		if started["created_at"] == nil || started["started_at"] == nil || started["usage"] == nil {
			t.Errorf("started task %v", started)
		}
		done := waitTask(t, e, started["id"].(string), "completed")
		if done["output"] != "The answer is 42." || done["error"] != nil || done["finished_at"] == nil ||
			!sameJSON(t, done["usage"], map[string]any{"prompt_tokens": 250, "completion_tokens": 19, "total_tokens": 269}) {
			t.Errorf("completed task %v", done)
		}
		m.push(func(context.Context) (*model.Response, error) {
			return nil, skilld.Errorf(skilld.ERATELIMITED, "provider rate limit")
		})
		failedID := e.must(201, "POST", "/v1/workspaces/default/agents/bot/tasks", e.admin, map[string]any{"input": "fail"})["id"].(string)
		failed := waitTask(t, e, failedID, "failed")
		if !sameJSON(t, failed["error"], map[string]any{"code": "rate_limited", "message": "provider rate limit"}) || failed["output"] != nil {
			t.Errorf("failed task %v", failed)
		}
		list := e.must(200, "GET", "/v1/workspaces/default/tasks", e.admin, nil)["items"].([]any)
		if len(list) != 2 || !sameJSON(t, list[0].(map[string]any)["error"], failed["error"]) || list[1].(map[string]any)["output"] != "The answer is 42." ||
			!sameJSON(t, list[1].(map[string]any)["usage"], done["usage"]) {
			t.Errorf("listed %v", list)
		}
	})
}

// TestTaskUsageCountsCompaction: a compaction's summary is a model call,
// and counts in the task's usage with the turns.
func TestTaskUsageCountsCompaction(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	sbx, _ := bwraptest.New(t)
	m := &compactingModel{}
	e.runTasks(executor.Config{DB: e.db, Blobs: e.svc.Packages().Blobs, Sandboxes: sbx,
		OpenModel: func(string) (model.Model, string, error) { return m, "test", nil },
		Tokenizer: func(string) (agent.Counter, error) { return wordCount{}, nil },
		Window:    func(string) (int, bool) { return 0, false }}, nil)
	// A window that a dozen long tool results overflow: summaries make
	// room for them.
	e.must(201, "POST", "/v1/workspaces/default/agents", e.admin, map[string]any{"name": "chatty",
		"config": map[string]any{"model": "test:m", "context": map[string]any{"window": 4000}}})
	id := e.must(201, "POST", "/v1/workspaces/default/agents/chatty/tasks", e.admin, map[string]any{"input": "go"})["id"].(string)
	done := waitTask(t, e, id, "completed")
	turns, summaries := 0, 0
	for _, item := range e.must(200, "GET", "/v1/workspaces/default/tasks/"+id+"/events?format=json", e.admin, nil)["items"].([]any) {
		switch ev := item.(map[string]any); ev["type"] {
		case agent.EventLLMCallCompleted:
			turns++
		case agent.EventContextCompacted:
			if ev["summarized"] == true {
				summaries++
			}
		}
	}
	if summaries == 0 {
		t.Fatalf("the task never compacted (%d turns)", turns)
	}
	want := map[string]any{"prompt_tokens": 10*turns + 5*summaries, "completion_tokens": turns + 3*summaries, "total_tokens": 11*turns + 8*summaries}
	if !sameJSON(t, done["usage"], want) {
		t.Errorf("usage %v, want %v: %d turns and %d summaries", done["usage"], want, turns, summaries)
	}
}

// compactingModel runs a long shell output calls times, then answers;
// every turn costs 10+1 tokens, every summary it is asked for 5+3.
type compactingModel struct {
	mu    sync.Mutex
	calls int
}

func (c *compactingModel) Generate(_ context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		resp := &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "done"}, StopReason: model.StopEnd, Usage: model.Usage{PromptTokens: 10, CompletionTokens: 1}}
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case strings.HasPrefix(req.System, "You summarize"):
			resp.Message.Content, resp.Usage = "The shell printed many numbers.", model.Usage{PromptTokens: 5, CompletionTokens: 3}
		case c.calls < 12:
			c.calls++
			args, _ := json.Marshal(map[string]string{"command": "seq 200 | tr '\\n' ' '"})
			resp.Message.Content, resp.StopReason = "", model.StopToolCalls
			resp.Message.ToolCalls = []model.ToolCall{{ID: "call-" + strconv.Itoa(c.calls), Name: agent.ToolShell, Arguments: args}}
		}
		yield(&model.Chunk{Response: resp}, nil)
	}
}

// withUsage makes an answer report usage.
func withUsage(f func(context.Context) (*model.Response, error), prompt, completion int) func(context.Context) (*model.Response, error) {
	return func(ctx context.Context) (*model.Response, error) {
		resp, err := f(ctx)
		if resp != nil {
			resp.Usage = model.Usage{PromptTokens: prompt, CompletionTokens: completion}
		}
		return resp, err
	}
}

// waitTask polls a task until it has status st; the deadline only keeps a
// broken executor from hanging the test.
func waitTask(t *testing.T, e *testEnv, id, st string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		task := e.must(200, "GET", "/v1/workspaces/default/tasks/"+id, e.admin, nil)
		if task["status"] == st {
			return task
		}
		if skilld.TaskStatus(task["status"].(string)).Done() || time.Now().After(deadline) {
			t.Fatalf("task %s never got %s: %v", id, st, task)
		}
	}
}

// sameJSON compares two values as JSON documents.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var u, v any
	json.Unmarshal(x, &u)
	json.Unmarshal(y, &v)
	return string(mustJSON(u)) == string(mustJSON(v))
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return b
}
