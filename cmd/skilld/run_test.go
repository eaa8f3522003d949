package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/blob/bloburl"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storeurl"
)

func TestRunScripted(t *testing.T) {
	t.Parallel()
	bwraptest.Require(t)
	code, out, errOut := runCLI(t, "run", "--skills", examples, "--model", "scripted:../../examples/scripts/csv-demo.json",
		"--context-window", "128000", "--cache-dir", t.TempDir(), "--keep-sandbox", "How many rows has orders.csv?")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"skill csv-inspector activated", "rows: 3", "total (1)", "✓ completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	ws := keptSandbox(t, errOut)
	if b, err := os.ReadFile(filepath.Join(ws, "orders.csv")); err != nil || !strings.HasPrefix(string(b), "id,customer,total") {
		t.Errorf("the kept sandbox lacks the file the task wrote: %q, %v", b, err)
	}
}

// keptSandbox returns the folder a run printed as kept, removed at the end
// of the test.
func keptSandbox(t *testing.T, errOut string) string {
	t.Helper()
	_, rest, ok := strings.Cut(errOut, "sandbox kept: ")
	ws, _, _ := strings.Cut(rest, "\n")
	if !ok || ws == "" {
		t.Fatalf("no kept sandbox in %q", errOut)
	}
	// <temp>/skilld-run-…/run/workspace: the run's own folder goes (as
	// root the workspace is a mount of its own).
	t.Cleanup(func() {
		syscall.Unmount(ws, syscall.MNT_DETACH)
		os.RemoveAll(filepath.Dir(filepath.Dir(ws)))
	})
	return ws
}

// fakeOpenAI speaks Chat Completions with streaming, answering each request
// with the next step and recording what it received.
type fakeOpenAI struct {
	mu    sync.Mutex
	steps []func(t *testing.T, req map[string]any) []string // SSE data lines
	reqs  []map[string]any
	t     *testing.T
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
		http.Error(w, `{"error":{"message":"bad path or key"}}`, http.StatusUnauthorized)
		return
	}
	var req map[string]any
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &req)
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if n >= len(f.steps) {
		http.Error(w, `{"error":{"message":"no more steps"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, line := range f.steps[n](f.t, req) {
		fmt.Fprintf(w, "data: %s\n\n", line)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func chunk(delta string, finish string) string {
	fin := "null"
	if finish != "" {
		fin = `"` + finish + `"`
	}
	return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}]}`
}

const usageChunk = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":9,"total_tokens":129}}`

// callChunks streams one tool call with its arguments split in pieces.
func callChunks(id, name, args string) []string {
	mid := len(args) / 2
	return []string{
		chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+jsonString(args[:mid])+`}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+jsonString(args[mid:])+`}}]}`, ""),
		chunk(`{}`, "tool_calls"),
		usageChunk,
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func lastMessage(req map[string]any) map[string]any {
	msgs := req["messages"].([]any)
	return msgs[len(msgs)-1].(map[string]any)
}

// TestRunOpenAI runs the CLI against a local server speaking the OpenAI
// protocol: the first request carries the catalog and the activate_skill
// enum, the activation lands in the next request, the skill's files are in
// the sandbox and its script runs through the shell tool.
func TestRunOpenAI(t *testing.T) {
	t.Parallel()
	bwraptest.Require(t)
	f := &fakeOpenAI{t: t}
	f.steps = []func(*testing.T, map[string]any) []string{
		func(t *testing.T, req map[string]any) []string {
			system := req["messages"].([]any)[0].(map[string]any)
			if system["role"] != "system" || !strings.Contains(system["content"].(string), "- csv-inspector: Summarize a CSV file") {
				t.Errorf("first message is not the system prompt with the catalog: %v", system)
			}
			var enum []string
			for _, tl := range req["tools"].([]any) {
				fn := tl.(map[string]any)["function"].(map[string]any)
				if fn["name"] == "activate_skill" {
					for _, v := range fn["parameters"].(map[string]any)["properties"].(map[string]any)["skill_name"].(map[string]any)["enum"].([]any) {
						enum = append(enum, v.(string))
					}
				}
			}
			if !slices.Equal(enum, []string{"commit-message", "csv-inspector", "http-api-review", "release-notes"}) {
				t.Errorf("enum %v", enum)
			}
			return callChunks("call_1", "activate_skill", `{"skill_name":"csv-inspector"}`)
		},
		func(t *testing.T, req map[string]any) []string {
			last := lastMessage(req)
			if last["role"] != "tool" || last["tool_call_id"] != "call_1" || !strings.HasPrefix(last["content"].(string), `<skill_content name="csv-inspector">`) {
				t.Errorf("activation result: %v", last)
			}
			return callChunks("call_2", "shell", `{"command":"printf 'a,b\\n1,\\n' > d.csv && sh skills/csv-inspector-*/scripts/csv-summary.sh d.csv"}`)
		},
		func(t *testing.T, req map[string]any) []string {
			if c := lastMessage(req)["content"].(string); !strings.Contains(c, "rows: 1") || !strings.Contains(c, "b (1)") {
				t.Errorf("script output: %q", c)
			}
			return []string{chunk(`{"role":"assistant","content":"One row; "}`, ""), chunk(`{"content":"b is empty."}`, "stop"), usageChunk}
		},
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	code, out, errOut := runCLI(t, "run", "--json", "--skills", examples, "--model", "openai:gpt-test", "--context-window", "64000",
		"--base-url", srv.URL+"/v1", "--api-key", "test-key", "--cache-dir", t.TempDir(), "Summarize d.csv")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var events []agent.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev agent.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		events = append(events, ev)
	}
	for i, ev := range events {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
	last := events[len(events)-1]
	if done, ok := last.Payload.(agent.TaskCompleted); !ok || done.Output != "One row; b is empty." {
		t.Errorf("last event %+v", last)
	}
	if len(f.reqs) != 3 {
		t.Errorf("%d requests", len(f.reqs))
	}
}

func TestRunStoredAgent(t *testing.T) {
	t.Parallel()
	bwraptest.Require(t)
	data := t.TempDir()
	ctx := t.Context()
	svc, actor, done := openData(t, data)
	p, err := pack.ReadDir(ctx, filepath.Join(examples, "csv-inspector"), pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range p.Files() {
		files[f.Path] = string(f.Data)
	}
	if _, err := svc.CreateSkill(ctx, actor, service.CreateSkillParams{Files: files}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateAgent(ctx, actor, service.AgentParams{Name: "analyst", Config: skilld.AgentConfig{Model: "scripted:../../examples/scripts/csv-demo.json",
		Context: skilld.ContextSettings{Window: 100000}}, Skills: []service.AgentSkillRef{{Skill: "csv-inspector"}}}); err != nil {
		t.Fatal(err)
	}
	done()
	code, out, errOut := runCLI(t, "run", "--data", data, "--agent", "analyst", "--cache-dir", t.TempDir(), "Look at orders.csv")
	if code != exitOK || !strings.Contains(out, "rows: 3") || !strings.Contains(errOut, "task: ") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	svc, actor, done = openData(t, data)
	defer done()
	tasks, err := svc.ListTasks(ctx, actor, service.ListTasksParams{})
	if err != nil || tasks.Total != 1 || tasks.Items[0].Status != skilld.TaskCompleted {
		t.Errorf("recorded tasks: %+v %v", tasks, err)
	}
}

// openData opens the storage of a --data folder (made on first use) as a
// service, with an admin of the workspace "default"; done closes it, so
// that the CLI can open the folder next.
func openData(t *testing.T, data string) (svc *service.Service, admin service.Actor, done func()) {
	t.Helper()
	ctx := t.Context()
	db, err := storeurl.Open(ctx, "sqlite://"+filepath.Join(data, "skilld.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := bloburl.Open(ctx, "file://"+filepath.Join(data, "blobs"))
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	svc = service.New(db, blobs, nil, service.Config{})
	if _, err := svc.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	admin, err = svc.In(ctx, service.Actor{InstanceAdmin: true, Role: skilld.RoleAdmin}, "default")
	if err != nil {
		t.Fatal(err)
	}
	return svc, admin, func() { db.Close(); blobs.Close() }
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	bwraptest.Require(t)
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`[{"text":"hi"}]`), 0o644)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--model", "openai:gpt-4o-mini"}, exitUsage, "give the task"},
		{[]string{"run", "task"}, exitUsage, "--model is required"},
		{[]string{"run", "--model", "mystery:x", "task"}, exitUsage, "mystery"},
		{[]string{"run", "--model", "scripted:" + script, "task"}, exitUsage, "--context-window"},
		{[]string{"run", "--model", "scripted:" + script, "--context-window", "1000", "--skills", "x", "--agent", "y", "task"}, exitUsage, "either"},
		{[]string{"run", "--model", "scripted:" + script, "--context-window", "1000", "--skills", "/no/such/dir", "task"}, exitFailure, "does not exist"},
		{[]string{"run", "--model", "scripted:" + script, "--context-window", "100000", "--cache-dir", t.TempDir(), "task"}, exitOK, "assistant: hi"},
		{[]string{"run", "--model", "scripted:" + script, "--context-window", "100000", "--sandbox", t.TempDir(), "task"}, exitUsage, "use bwrap or unsafe-host"},
		{[]string{"run", "--model", "scripted:" + script, "--context-window", "100000", "--sandbox-memory", "1", "task"}, exitUsage, "at least 16"},
	} {
		code, out, errOut := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(out+errOut, tt.want) {
			t.Errorf("skilld %q: exit %d, want %d with %q\n%s%s", tt.args, code, tt.code, tt.want, out, errOut)
		}
	}
	// A run's sandbox is removed at its end unless it is to be kept.
	_, _, errOut := runCLI(t, "run", "--model", "scripted:"+script, "--context-window", "1000", "--cache-dir", t.TempDir(), "task")
	_, rest, ok := strings.Cut(errOut, "sandbox: ")
	dir, _, _ := strings.Cut(rest, " (removed at the end")
	if !ok || dir == "" {
		t.Fatalf("no sandbox line in %q", errOut)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("sandbox %s left behind: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(dir))); !os.IsNotExist(err) {
		t.Errorf("the run's folder %s left behind: %v", filepath.Dir(filepath.Dir(dir)), err)
	}
}

func TestRunUnsafeHost(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "run", "--skills", examples, "--model", "scripted:../../examples/scripts/csv-demo.json",
		"--context-window", "128000", "--sandbox", "unsafe-host", "--json", "How many rows has orders.csv?")
	if code != exitOK || !strings.Contains(errOut, "WARNING: sandbox unsafe-host") || !strings.Contains(out, `"type":"sandbox.ready"`) || !strings.Contains(out, `"warning":"sandbox unsafe-host`) {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestServerRefusesScriptedModels(t *testing.T) {
	t.Parallel()
	m := &models{}
	if _, _, err := m.open("scripted:/etc/passwd"); skilld.ErrorCode(err) != skilld.EFORBIDDEN {
		t.Errorf("scripted model on a server: %v", err)
	}
	m.scripted = true
	if _, _, err := m.open("scripted:/no/such/file.json"); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("allowed scripted model with a missing file: %v", err)
	}
}

// TestRunSkipsInvalidSkills: with one invalid skill among valid ones, the
// run goes on with the valid ones and names the invalid one, its path and
// why, on stderr.
func TestRunSkipsInvalidSkills(t *testing.T) {
	t.Parallel()
	bwraptest.Require(t)
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "good"), map[string]string{"SKILL.md": skillText("good", "A good skill. Use when testing.")})
	writeFiles(t, filepath.Join(dir, "long"), map[string]string{"SKILL.md": "---\nname: long\ndescription: " + strings.Repeat("x", 1100) + "\n---\nbody\n"})
	writeFiles(t, filepath.Join(dir, "no-words"), map[string]string{"SKILL.md": "---\nname: no-words\n---\nbody\n"})
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`[{"text":"hi"}]`), 0o644)
	code, out, errOut := runCLI(t, "run", "--skills", dir, "--model", "scripted:"+script, "--context-window", "100000", "--cache-dir", t.TempDir(), "task")
	if code != exitOK || !strings.Contains(out, "assistant: hi") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"skipped " + filepath.Join(dir, "no-words"), `skill "no-words"`, "Missing required field in frontmatter: description"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "skipped "+filepath.Join(dir, "good")) || strings.Contains(errOut, "skipped "+filepath.Join(dir, "long")) {
		t.Errorf("the valid skill was skipped:\n%s", errOut)
	}
}
