package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/service"
)

// startCLI runs a command in-process in the background, as on a terminal
// when terminal is set; wait returns its exit code once it has ended.
func startCLI(t *testing.T, terminal bool, args ...string) (stdout, stderr *syncBuffer, wait func() int) {
	t.Helper()
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(t.Context(), args, &env{stdout: stdout, stderr: stderr, terminal: terminal}) }()
	return stdout, stderr, func() int { return <-done }
}

// waitFor waits until b holds want; a command that never writes it fails
// the test (the deadline only bounds a broken run).
func waitFor(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(b.String(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("never saw %q in:\n%s", want, b.String())
			return
		}
	}
}

// heldOpenAI answers Chat Completions with steps, each of which may
// write, flush and wait for the CLI's output before going on.
type heldOpenAI struct {
	mu    sync.Mutex
	n     int
	steps []func(w http.ResponseWriter, send func(data string))
}

func (h *heldOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	h.mu.Lock()
	n := h.n
	h.n++
	h.mu.Unlock()
	if n >= len(h.steps) {
		http.Error(w, `{"error":{"message":"no more steps"}}`, http.StatusBadRequest)
		return
	}
	h.steps[n](w, func(data string) {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	})
}

// TestRunShowsProgress: on a terminal, skilld run says what it waits for
// while the model is silent, says each retry as it starts, streams the
// model's text as it arrives (shown once), and shows a tool's output as
// indented lines, cut after a few.
func TestRunShowsProgress(t *testing.T) {
	t.Parallel()
	bwraptest.Require(t)
	var stdout, stderr *syncBuffer
	ready := make(chan struct{})
	h := &heldOpenAI{}
	h.steps = []func(http.ResponseWriter, func(string)){
		func(w http.ResponseWriter, _ func(string)) {
			<-ready
			waitFor(t, stderr, "… waiting for the model · ")
			w.Header().Set("Retry-After-Ms", "10")
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		},
		func(w http.ResponseWriter, send func(string)) {
			send(chunk(`{"role":"assistant","content":"Counting "}`, ""))
			waitFor(t, stdout, "assistant: Counting ")
			send(chunk(`{"content":"lines."}`, ""))
			for _, c := range callChunks("call_1", "shell", `{"command":"seq 1 9"}`) {
				send(c)
			}
			send("[DONE]")
		},
		func(w http.ResponseWriter, send func(string)) {
			for _, c := range textAnswer("Nine lines.") {
				send(c)
			}
			send("[DONE]")
		},
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	stdout, stderr, wait := startCLI(t, true, "run", "--skills", examples, "--model", "openai:gpt-test", "--context-window", "64000",
		"--base-url", srv.URL+"/v1", "--api-key", "test-key", "--cache-dir", t.TempDir(), "Count the lines")
	close(ready)
	if code := wait(); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	out, errOut := stdout.String(), stderr.String()
	if !strings.Contains(errOut, "openai: HTTP 503 Service Unavailable: overloaded; retry 1 of 4\n") {
		t.Errorf("the retry was not said:\n%q", errOut)
	}
	if strings.Count(out, "Counting") != 1 || !strings.Contains(out, "assistant: Counting lines.\n→ shell") {
		t.Errorf("streamed text not shown exactly once:\n%s", out)
	}
	if !strings.Contains(out, "  ← 1\n    2\n    3\n    4\n    5\n    6\n    … 3 more lines (-v shows them)\n  ✓ exit 0\n") {
		t.Errorf("tool output not shown as cut lines:\n%s", out)
	}
	if !strings.Contains(out, "assistant: Nine lines.\n✓ completed\n") {
		t.Errorf("the answer:\n%s", out)
	}
	if strings.Contains(out, "\r") || strings.Contains(out, "\033") {
		t.Errorf("the status line is drawn on stderr only:\n%q", out)
	}
}

// TestRunPlainOutput: in a pipe (no terminal) the output has no status
// line and no escape codes, and an activation shows one token count.
func TestRunPlainOutput(t *testing.T) {
	t.Parallel()
	bwraptest.Require(t)
	code, out, errOut := runCLI(t, "run", "--skills", examples, "--model", "scripted:../../examples/scripts/csv-demo.json",
		"--context-window", "128000", "--cache-dir", t.TempDir(), "How many rows has orders.csv?")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, s := range []string{out, errOut} {
		if strings.ContainsAny(s, "\r\033") || strings.Contains(s, "waiting for") {
			t.Errorf("status output outside a terminal:\n%q", s)
		}
	}
	// The count depends on where the skill is placed, which names the
	// sandbox folder; one number, once, is the point.
	if strings.Count(out, "tokens") != 1 || !regexp.MustCompile(`skill csv-inspector activated \(\d+ tokens\)\n`).MatchString(out) {
		t.Errorf("an activation must show one token count:\n%s", out)
	}
	if strings.Count(out, "assistant: This is a CSV question") != 1 {
		t.Errorf("scripted text shown more or less than once:\n%s", out)
	}
}

// TestRunStoredAgentChecksModelFirst: a stored agent whose model cannot
// be opened (no API key) fails at once, before a sandbox folder or a task
// exists.
func TestRunStoredAgentChecksModelFirst(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	bwraptest.Require(t)
	data := t.TempDir()
	ctx := t.Context()
	svc, actor, done := openData(t, data)
	if _, err := svc.CreateAgent(ctx, actor, service.AgentParams{Name: "remote", Config: skilld.AgentConfig{Model: "openai:gpt-4o-mini"}}); err != nil {
		t.Fatal(err)
	}
	done()
	// Skills from disk: the same, before the run's sandbox is made.
	code, out, errOut := runCLI(t, "run", "--skills", examples, "--model", "openai:gpt-4o-mini", "--cache-dir", t.TempDir(), "hello")
	if code != exitFailure || !strings.Contains(errOut, "no API key (set OPENAI_API_KEY") || strings.Contains(errOut, "sandbox") {
		t.Errorf("--skills without an API key: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "run", "--data", data, "--agent", "remote", "--cache-dir", t.TempDir(), "hello")
	if code != exitFailure || !strings.Contains(errOut, "no API key (set OPENAI_API_KEY") || strings.Contains(errOut, "task: ") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, "work", "sandboxes")); !os.IsNotExist(err) {
		t.Errorf("a sandbox folder was made before the model was checked: %v", err)
	}
	svc, actor, done = openData(t, data)
	defer done()
	if tasks, err := svc.ListTasks(ctx, actor, service.ListTasksParams{}); err != nil || tasks.Total != 0 {
		t.Errorf("a task was recorded: %+v %v", tasks, err)
	}
}
