package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// chatServer speaks OpenAI's Chat Completions (streaming) and answers
// each request with answer's SSE data lines; it records the requests.
type chatServer struct {
	mu     sync.Mutex
	reqs   []map[string]any
	answer func(req map[string]any) []string
}

func (c *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &req)
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for _, line := range c.answer(req) {
		fmt.Fprintf(w, "data: %s\n\n", line)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func systemOf(req map[string]any) string {
	first := req["messages"].([]any)[0].(map[string]any)
	if first["role"] != "system" {
		return ""
	}
	s, _ := first["content"].(string)
	return s
}

func textAnswer(s string) []string {
	return []string{chunk(`{"role":"assistant","content":`+jsonString(s)+`}`, "stop"), usageChunk}
}

// turns counts the non-summary requests so far, this one included.
func (c *chatServer) turns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.reqs {
		if !strings.HasPrefix(systemOf(r), "You summarize") {
			n++
		}
	}
	return n
}

// contextAnswer plays a task that loads two skills with at most one
// loaded, then runs commands whose outputs fill a small window.
func (c *chatServer) contextAnswer(t *testing.T) func(map[string]any) []string {
	return func(req map[string]any) []string {
		if strings.HasPrefix(systemOf(req), "You summarize") {
			return textAnswer("Goal: inspect the data. Done: loaded the skills, printed long outputs.")
		}
		switch n := c.turns(); {
		case n == 1:
			return callChunks(fmt.Sprint("call_", n), "activate_skill", `{"skill_name":"csv-inspector"}`)
		case n == 2:
			return callChunks(fmt.Sprint("call_", n), "activate_skill", `{"skill_name":"release-notes"}`)
		case n < 14:
			return callChunks(fmt.Sprint("call_", n), "shell", `{"command":"yes line-of-output | head -c 3000"}`)
		}
		return textAnswer("done")
	}
}

// TestRunContextManagement runs both placements with windowing and
// compaction through skilld run against an OpenAI-compatible server.
func TestRunContextManagement(t *testing.T) {
	t.Parallel()
	bwraptest.Require(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"context", []string{"--placement", "context", "--max-loaded", "1", "--max-messages", "12"}},
		{"transcript", []string{"--placement", "transcript"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &chatServer{}
			c.answer = c.contextAnswer(t)
			srv := httptest.NewServer(c)
			defer srv.Close()
			args := append([]string{"run", "--json", "--skills", examples, "--model", "openai:gpt-test", "--context-window", "6000",
				"--base-url", srv.URL + "/v1", "--api-key", "test-key", "--cache-dir", t.TempDir()}, tc.args...)
			code, out, errOut := runCLI(t, append(args, "Inspect the data.")...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			types := map[string]int{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var ev agent.Event
				json.Unmarshal([]byte(line), &ev)
				types[ev.Type]++
			}
			if types[agent.EventContextCompacted] == 0 {
				t.Errorf("no compaction: %v", types)
			}
			for _, r := range c.reqs[2:] {
				sys := systemOf(r)
				if strings.HasPrefix(sys, "You summarize") {
					continue
				}
				msgs := r["messages"].([]any)
				raw, _ := json.Marshal(r)
				switch tc.name {
				case "context":
					if !strings.Contains(sys, `<skill_content name="release-notes">`) || strings.Contains(sys, `<skill_content name="csv-inspector">`) {
						t.Errorf("the current context does not hold release-notes alone:\n%.300s", sys)
					}
					if len(msgs) > 13 { // the system message and 12
						t.Errorf("%d messages, above the cap", len(msgs)-1)
					}
				case "transcript":
					if !strings.Contains(string(raw), `\u003cskill_content name=\"csv-inspector\"\u003e`) {
						t.Errorf("the csv-inspector activation left the request")
					}
				}
			}
			if tc.name == "context" && types[agent.EventSkillUnloaded] != 1 {
				t.Errorf("unloads: %v", types)
			}
		})
	}
}

// TestServeContextManagement runs a server task of an agent in context
// placement against an OpenAI-compatible server.
func TestServeContextManagement(t *testing.T) {
	bwraptest.Require(t)
	c := &chatServer{}
	c.answer = c.contextAnswer(t)
	srv := httptest.NewServer(c)
	defer srv.Close()
	secret := "skd_context" + strings.Repeat("z", 24)
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", secret)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	base, _, stop := startServe(t, "--data", t.TempDir())
	defer stop()
	for _, s := range []string{"csv-inspector", "release-notes"} {
		if code, out, errOut := runCLI(t, "skills", "create", "--server", base, "--token", secret, examples+"/"+s); code != exitOK {
			t.Fatalf("creating %s: %s%s", s, out, errOut)
		}
	}
	code, out, errOut := runCLI(t, "agents", "create", "inspector", "--server", base, "--token", secret, "--model", "openai:gpt-test",
		"--context-window", "6000", "--placement", "context", "--max-loaded", "1", "--max-messages", "12", "--skill", "csv-inspector", "--skill", "release-notes")
	if code != exitOK {
		t.Fatalf("agents create: %s%s", out, errOut)
	}
	results := runTask(t, base, secret, "default", "inspector")
	if len(results) < 12 || !strings.Contains(results[1], "Unloaded: 'csv-inspector'") {
		t.Errorf("tool results: %q", results)
	}
	compacted := false
	for _, r := range c.reqs {
		compacted = compacted || strings.HasPrefix(systemOf(r), "You summarize")
	}
	if !compacted {
		t.Error("the server task never compacted")
	}
	// A setting that would do nothing is refused when the agent is saved.
	code, _, errOut = runCLI(t, "agents", "create", "odd", "--server", base, "--token", secret, "--max-loaded", "2")
	if code != exitFailure || !strings.Contains(errOut, "max_loaded applies to context placement only") {
		t.Errorf("max-loaded in transcript placement: exit %d %s", code, errOut)
	}
}
