package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// taskServer is a real `skilld serve` that runs tasks with scripted
// models, and the CLI against it.
type taskServer struct {
	url, token string
}

func newTaskServer(t *testing.T) *taskServer {
	t.Helper()
	bwraptest.Require(t)
	secret := "skd_tasks" + strings.Repeat("t", 24)
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", secret)
	t.Setenv("SKILLD_ALLOW_SCRIPTED_MODELS", "1")
	t.Setenv("SKILLD_WORKSPACE", "")
	base, _, stop := startServe(t, "--data", t.TempDir())
	t.Cleanup(func() { stop() })
	return &taskServer{url: base, token: secret}
}

// cli runs a client command against the server as its admin.
func (s *taskServer) cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, append(args, "--server", s.url, "--token", s.token)...)
}

func (s *taskServer) ok(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := s.cli(t, args...)
	if code != exitOK {
		t.Fatalf("skilld %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (s *taskServer) okJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var m map[string]any
	out := s.ok(t, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("skilld %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
	return m
}

// agent creates an agent whose model plays script.
func (s *taskServer) agent(t *testing.T, name, script string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), name+".json")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	s.ok(t, "agents", "create", name, "--model", "scripted:"+file, "--context-window", "100000")
}

// waitStatus polls a task until it has the status.
func (s *taskServer) waitStatus(t *testing.T, id, status string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		task := s.okJSON(t, "tasks", "get", id)
		if task["status"] == status {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %v, never %s", id, task["status"], status)
		}
	}
}

// TestTasksCommands: start with --follow, list, get; a call that needs
// approval is approved or denied from the CLI; a task is cancelled.
func TestTasksCommands(t *testing.T) {
	s := newTaskServer(t)
	s.analyst(t)

	code, out, errOut := s.cli(t, "tasks", "start", "analyst", "How many rows has orders.csv?", "--follow")
	if code != exitOK || !strings.HasPrefix(errOut, "task: ") || !strings.Contains(out, "skill csv-inspector activated") ||
		!strings.Contains(out, "  ← rows: 3\n") || !strings.HasSuffix(out, "✓ completed\n") {
		t.Fatalf("tasks start --follow: exit %d\n%s\n%s", code, out, errOut)
	}
	id := strings.Fields(strings.TrimPrefix(errOut, "task: "))[0]
	if out := s.ok(t, "tasks", "list"); !strings.Contains(out, id) || !strings.Contains(out, "analyst") || !strings.Contains(out, "completed") {
		t.Errorf("tasks list:\n%s", out)
	}
	if out := s.ok(t, "tasks", "list", "--status", "failed"); strings.Contains(out, id) {
		t.Errorf("tasks list --status failed:\n%s", out)
	}
	if got := s.okJSON(t, "tasks", "get", id); got["status"] != "completed" || got["id"] != id {
		t.Errorf("tasks get: %v", got)
	}
	if out := s.ok(t, "tasks", "get", id); !strings.Contains(out, "analyst (") || !strings.Contains(out, "one total is empty") {
		t.Errorf("tasks get:\n%s", out)
	}

	// A call that needs approval waits; the CLI names it and answers it.
	s.agent(t, "careful", `[{"tool_calls": [{"name": "shell", "arguments": {"command": "echo ran-it"}}]}, {"text": "done"}]`)
	for _, verdict := range []string{"approve", "deny"} {
		task := s.okJSON(t, "tasks", "start", "careful", "Run it", "--require-approval", "shell")
		id := task["id"].(string)
		s.waitStatus(t, id, "waiting_for_approval")
		shown := s.ok(t, "tasks", "get", id)
		_, rest, found := strings.Cut(shown, "skilld tasks approve "+id+" ")
		call, _, _ := strings.Cut(rest, " ")
		if !found || call == "" || !strings.Contains(shown, "or   skilld tasks deny "+id+" "+call) {
			t.Fatalf("tasks get of a waiting task does not say how to answer:\n%s", shown)
		}
		if code, _, errOut := s.cli(t, "tasks", verdict, id, call); code != exitOK || !strings.Contains(errOut, " call "+call+" of task "+id) {
			t.Fatalf("tasks %s: exit %d %s", verdict, code, errOut)
		}
		code, out, errOut := s.cli(t, "tasks", "follow", id)
		decided := map[string]string{"approve": "approved", "deny": "refused"}[verdict]
		if code != exitOK || !strings.Contains(out, "tool shell needs approval") || !strings.Contains(out, "call "+call+" of shell "+decided+"\n") ||
			strings.Contains(out, "  ← ran-it\n") != (verdict == "approve") {
			t.Errorf("tasks follow after %s: exit %d\n%s%s", verdict, code, out, errOut)
		}
	}
	if code, _, errOut := s.cli(t, "tasks", "approve", id, "call_nope"); code != exitFailure || !strings.HasPrefix(errOut, "skilld: ") {
		t.Errorf("approving a finished task: exit %d %s", code, errOut)
	}

	// Cancelling a running task ends it; following it then exits 1.
	s.agent(t, "slow", `[{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 60"}}]}, {"text": "late"}]`)
	task := s.okJSON(t, "tasks", "start", "slow", "Wait")
	slow := task["id"].(string)
	s.waitStatus(t, slow, "running")
	if got := s.okJSON(t, "tasks", "cancel", slow); got["id"] != slow {
		t.Errorf("tasks cancel: %v", got)
	}
	s.waitStatus(t, slow, "cancelled")
	if code, out, errOut := s.cli(t, "tasks", "follow", slow); code != exitFailure || !strings.Contains(out, "✗") {
		t.Errorf("follow of a cancelled task: exit %d\n%s%s", code, out, errOut)
	}

	// Usage errors and refusals.
	for _, args := range [][]string{{"tasks", "start", "analyst"}, {"tasks", "start", "analyst", " "}, {"tasks", "approve", id}, {"tasks", "get"}} {
		if code, _, _ := s.cli(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, errOut := s.cli(t, "tasks", "follow", "no-such-task"); code != exitFailure || !strings.HasPrefix(errOut, "skilld: not_found: ") {
		t.Errorf("following a missing task: exit %d %s", code, errOut)
	}
}

// cutProxy forwards to a server and cuts the first event stream after
// cut events, as a dropped connection; it records each stream request's
// Last-Event-ID.
type cutProxy struct {
	target *url.URL
	cut    int
	mu     sync.Mutex
	ids    []string
}

// forward sends r to target and writes the answer's status and headers;
// the caller copies the body and closes it. Nil when target did not
// answer (a 502 is written).
func forward(w http.ResponseWriter, r *http.Request, target *url.URL) *http.Response {
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host, out.RequestURI = target.Scheme, target.Host, ""
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return nil
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	return resp
}

func (p *cutProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp := forward(w, r, p.target)
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	if !strings.HasSuffix(r.URL.Path, "/events") {
		io.Copy(w, resp.Body)
		return
	}
	p.mu.Lock()
	p.ids = append(p.ids, r.Header.Get("Last-Event-ID"))
	first := len(p.ids) == 1
	p.mu.Unlock()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	events := 0
	for sc.Scan() {
		io.WriteString(w, sc.Text()+"\n")
		w.(http.Flusher).Flush()
		if sc.Text() == "" {
			events++
		}
		if first && events == p.cut {
			panic(http.ErrAbortHandler) // the connection drops
		}
	}
}

// followVia runs a task of the analyst to its end, then follows it with
// the CLI through the proxy proxy makes for the server's URL, and returns
// what the CLI printed, having exited 0.
func followVia(t *testing.T, proxy func(target *url.URL) http.Handler) (out, errOut string) {
	t.Helper()
	s := newTaskServer(t)
	s.analyst(t)
	task := s.okJSON(t, "tasks", "start", "analyst", "How many rows has orders.csv?")
	id := task["id"].(string)
	s.waitStatus(t, id, "completed")
	target, _ := url.Parse(s.url)
	srv := httptest.NewServer(proxy(target))
	defer srv.Close()
	code, out, errOut := runCLI(t, "tasks", "follow", id, "--json", "--server", srv.URL, "--token", s.token)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	return out, errOut
}

// TestTasksFollowResumes: a stream that drops is resumed after the last
// event shown, with Last-Event-ID; every event is shown exactly once, in
// order, and the reconnection is said.
func TestTasksFollowResumes(t *testing.T) {
	var p *cutProxy
	out, errOut := followVia(t, func(target *url.URL) http.Handler {
		p = &cutProxy{target: target, cut: 3}
		return p
	})
	var seqs []int64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Seq  int64
			Type string
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		seqs = append(seqs, ev.Seq)
	}
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("events %v: each once and in order, from 1", seqs)
		}
	}
	if len(seqs) <= p.cut || !strings.Contains(errOut, "; reconnecting in 500ms after event 3 (attempt 2 of 10)\n") {
		t.Errorf("%d events; stderr:\n%s", len(seqs), errOut)
	}
	if len(p.ids) != 2 || p.ids[0] != "" || p.ids[1] != "3" {
		t.Errorf("Last-Event-ID of the stream requests: %q", p.ids)
	}
}

// stopProxy stands for a server at its limits and then stopping: it
// answers the first event stream request 429 with Retry-After, as a
// token holding its most streams gets; ends the second after cut events
// with the shutdown event of a server that stops; forwards the rest. It
// counts the task reads (GET …/tasks/{id}) it forwards.
type stopProxy struct {
	target *url.URL
	cut    int
	mu     sync.Mutex
	ids    []string
	reads  int
}

func (p *stopProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	stream := strings.HasSuffix(r.URL.Path, "/events")
	n := len(p.ids)
	if stream {
		p.ids = append(p.ids, r.Header.Get("Last-Event-ID"))
	} else if strings.Contains(r.URL.Path, "/tasks/") {
		p.reads++
	}
	p.mu.Unlock()
	if stream && n == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"code":"rate_limited","message":"this token holds its most open event streams (32); close one, or retry in 1 s","details":[{"field":"retry_after","message":"1"}]}}`)
		return
	}
	resp := forward(w, r, p.target)
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	if !stream || n > 1 {
		io.Copy(w, resp.Body)
		return
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for events := 0; events < p.cut && sc.Scan(); {
		io.WriteString(w, sc.Text()+"\n")
		if sc.Text() == "" {
			events++
		}
	}
	io.WriteString(w, "retry: 1000\nevent: shutdown\ndata: {\"code\":\"unavailable\",\"message\":\"the server is shutting down; reconnect with Last-Event-ID to resume after the last event received\"}\n\n")
}

// TestTasksFollowWaitsOut: following waits as long as a refused stream's
// Retry-After says, and after a stream ended by a stopping server as long
// as its retry field says, without asking that server for the task, and
// resumes after the last event shown: every event once, in order.
func TestTasksFollowWaitsOut(t *testing.T) {
	var p *stopProxy
	out, errOut := followVia(t, func(target *url.URL) http.Handler {
		p = &stopProxy{target: target, cut: 3}
		return p
	})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, line := range lines {
		var ev struct{ Seq int64 }
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Seq != int64(i+1) {
			t.Fatalf("event %d: %q, want seq %d (each once, in order)", i, line, i+1)
		}
	}
	for _, want := range []string{
		"this token holds its most open event streams (32); close one, or retry in 1 s; reconnecting in 1s after event 0 (attempt 2 of 10)\n",
		"the server is shutting down; reconnecting in 1s after event 3 (attempt 2 of 10)\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// One read after the refusal, one at the end; none after the
	// shutdown event.
	if len(lines) <= p.cut || len(p.ids) != 3 || p.ids[2] != "3" || p.reads != 2 {
		t.Errorf("%d events, stream requests with Last-Event-ID %q, %d task reads", len(lines), p.ids, p.reads)
	}
}

// analyst creates the csv-inspector skill and the agent "analyst" that
// uses it through the scripted demo model.
func (s *taskServer) analyst(t *testing.T) {
	t.Helper()
	abs, err := filepath.Abs("../../examples/scripts/csv-demo.json")
	if err != nil {
		t.Fatal(err)
	}
	s.ok(t, "skills", "create", examples+"/csv-inspector")
	s.ok(t, "agents", "create", "analyst", "--model", "scripted:"+abs, "--context-window", "100000", "--skill", "csv-inspector")
}
