package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/unsafehost"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// runInto runs a real agent (a scripted model, commands run on the host)
// on the task's input and writes its log into the task's, as the executor
// does, then sets the task's status.
func (e *env) runInto(task *skilld.Task, status skilld.TaskStatus, steps ...model.Step) {
	t := e.t
	t.Helper()
	p, err := unsafehost.New(unsafehost.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "task"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Destroy(context.Background()) })
	tok, err := tokenizer.ForModel("scripted", "")
	if err != nil {
		t.Fatal(err)
	}
	log := &agent.MemoryLog{}
	a, err := agent.New(agent.Config{Model: model.NewScripted(steps...), ModelName: "scripted", Window: 100000, Tokenizer: tok, Sandbox: sb, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range a.Run(t.Context(), agent.Task{ID: task.ID, Input: task.Input}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, en := range log.Entries() {
		if _, err := e.db.TaskLogAppend(t.Context(), &store.TaskLogAppendParams{TaskID: task.ID, Kind: en.Kind, Payload: en.Payload}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.db.TaskUpdate(t.Context(), &store.TaskUpdateParams{ID: task.ID, Status: status}); err != nil {
		t.Fatal(err)
	}
}

// answer is a scripted model's step: text and tool calls (name, arguments
// pairs).
func answer(text string, calls ...any) model.Step {
	var tcs []model.ToolCall
	for i := 0; i < len(calls); i += 2 {
		tcs = append(tcs, model.Call(calls[i].(string), calls[i+1]))
	}
	return model.Reply(text, tcs...)
}

// between is the part of a page from the element with id to the text end.
func between(t *testing.T, p page, id, end string) string {
	t.Helper()
	s := element(t, p, id)
	if i := strings.Index(s, end); i >= 0 {
		return s[:i]
	}
	t.Fatalf("no %q after #%s", end, id)
	return ""
}

// TestTaskConversation: a finished task's page shows the run as a
// conversation: the input, the assistant's Markdown rendered safely, each
// call's command as typed with its output folded, failed calls marked and
// their output open, the end; the model's view beside it; the raw events
// still there.
func TestTaskConversation(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	e.runInto(f.task, skilld.TaskCompleted,
		answer("Let me look.", "shell", map[string]any{"command": "echo start && seq 1 50"}),
		answer("", "shell", map[string]any{"command": `printf 'Traceback (most recent call last):\n  File "report.py", line 3\nValueError: bad <b>input</b>\n' && exit 1`},
			"read_file", map[string]any{"path": "missing.txt"}),
		answer("**3 rows** in `orders.csv`.\n\n<script>alert(1)</script>"),
	)
	p := e.signedIn(e.viewerTok).get("/ui/tasks/" + f.task.ID)
	conv := between(t, p, "conversation", `class="model-view"`)
	for _, want := range []string{
		`<li class="turn user"`, "write one",
		`<li class="turn assistant"`, "Let me look.",
		`<pre class="command">echo start &amp;&amp; seq 1 50</pre>`,
		// A successful output is folded, its first 40 lines shown.
		`<details class="output" id="call-4-0-out"><summary>Output · 51 lines (the first 40 shown; the task&#39;s events have all of it)</summary><pre>start`,
		`<span class="call-status">exit 0</span>`,
		// The failed command: marked, its output open, its text escaped.
		`<li class="turn call failed" id="call-10-0" data-tool="shell">`,
		`<span class="call-status">failed: exit 1</span>`,
		`<details class="output" id="call-10-0-out" open><summary>Output · 3 lines</summary><pre>Traceback (most recent call last):`,
		`ValueError: bad &lt;b&gt;input&lt;/b&gt;</pre>`,
		// A tool error.
		`<code class="args">path=missing.txt</code>`, `failed: error (not_found)`, `<summary>Output · 1 line</summary>`,
		// The answer, rendered; its script is not markup.
		"<strong>3 rows</strong> in <code>orders.csv</code>.",
		`<li class="turn notice">Task completed, but 2 tool calls failed</li>`,
	} {
		if !strings.Contains(conv, want) {
			t.Errorf("the conversation lacks %q:\n%s", want, conv)
		}
	}
	for _, bad := range []string{"<script>", `\u0026`, "[exit status"} {
		if strings.Contains(conv, bad) {
			t.Errorf("the conversation has %q:\n%s", bad, conv)
		}
	}
	if strings.Contains(conv, `seq 1 50`+"</pre>\n<details class=\"output\" id=\"call-4-0-out\" open") {
		t.Errorf("a successful output is open")
	}
	// Every answer links to the request it replied to, which is on the page.
	requests := element(t, p, "requests")
	for _, link := range []string{`href="#request-3"`, `href="#request-9"`, `href="#request-18"`} {
		if !strings.Contains(conv, link) {
			t.Errorf("the conversation lacks the link %s:\n%s", link, conv)
		}
		if !strings.Contains(requests, `id="`+strings.TrimPrefix(strings.TrimPrefix(link, `href="`), "#")) {
			t.Errorf("%s leads nowhere", link)
		}
	}
	if ev := element(t, p, "events"); !strings.Contains(ev, `<span class="etype">tool.result</span>`) || !strings.Contains(ev, `&#34;exit_code&#34;:1`) {
		t.Errorf("the raw events are gone:\n%s", ev)
	}

	// A failed task says why, marked.
	failed, err := e.svc.RunTask(t.Context(), e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: f.agent.ID}, Input: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	e.logEvent(failed.ID, agent.TaskFailed{Error: "the model is unavailable", Code: skilld.EUNAVAILABLE})
	if _, err := e.db.TaskUpdate(t.Context(), &store.TaskUpdateParams{ID: failed.ID, Status: skilld.TaskFailed}); err != nil {
		t.Fatal(err)
	}
	p = e.signedIn(e.viewerTok).get("/ui/tasks/" + failed.ID)
	if conv := between(t, p, "conversation", `class="model-view"`); !strings.Contains(conv, `<li class="turn notice failed">Task failed: the model is unavailable</li>`) {
		t.Errorf("a failed task's conversation:\n%s", conv)
	}
}

// TestLongConversation: however long the run and its outputs, the task
// page stays under 100 KB: the conversation shows its latest turns and
// says how many it leaves out.
func TestLongConversation(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	wide := "yes " + strings.Repeat("x", 290) + " | head -n 25"
	var steps []model.Step
	for range 40 {
		steps = append(steps, answer(strings.Repeat("A long thought. ", 200), "shell", map[string]any{"command": wide}))
	}
	steps = append(steps, answer("done"))
	e.runInto(f.task, skilld.TaskCompleted, steps...)
	p := e.signedIn(e.viewerTok).get("/ui/tasks/" + f.task.ID)
	if p.status != 200 || len(p.body) >= 100_000 {
		t.Fatalf("long conversation: %d, %d bytes", p.status, len(p.body))
	}
	conv := between(t, p, "conversation", `class="model-view"`)
	if !strings.Contains(conv, "earlier turns are not shown.") || !strings.Contains(conv, "Task completed") ||
		strings.Count(conv, `class="turn call"`) < 2 {
		t.Errorf("the long conversation:\n%s", conv)
	}
	t.Logf("page %d bytes, conversation %d", len(p.body), len(conv))
}
