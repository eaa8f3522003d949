package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld/internal/testbin"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// crashScript is what every task of the crash test does: activate a skill,
// run its script (which appends a line to count.txt: a side effect that
// must happen at most once), write a file, read the count, answer. The
// sleeps spread the steps out so that kills land everywhere.
const crashScript = `[
  {"tool_calls": [{"name": "activate_skill", "arguments": {"skill_name": "counter"}}]},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "sh skills/counter-*/scripts/count.sh; sleep 0.2"}}]},
  {"tool_calls": [{"name": "write_file", "arguments": {"path": "note.txt", "content": "written"}}]},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 0.2; cat count.txt"}}]},
  {"text": "done"}
]`

// TestCrashResume: 50 tasks on a real server that is killed with SIGKILL
// at random moments and restarted on the same data, again and again. Every
// task completes; every log is gap-free; no model answer was asked for
// twice; no tool call has two results; the counting script ran at most once
// per task (its count.txt, in the kept sandbox, has at most one line); and
// event streams that reconnect with Last-Event-ID across the kills see
// every entry exactly once.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a server for a while; skipped in -short mode")
	}
	bwraptest.Require(t)
	bin := testbin.Skilld(t)
	data := t.TempDir()
	t.Cleanup(func() { bwraptest.UnmountAll(t, data) })
	addr := freeAddr(t)
	srv := &crashServer{t: t, bin: bin, addr: addr, args: []string{"serve", "--addr", addr, "--data", data, "--keep-sandboxes", "--max-running-tasks", "16"},
		env: []string{"SKILLD_BOOTSTRAP_TOKEN=" + crashToken, "SKILLD_ALLOW_SCRIPTED_MODELS=1"}}
	srv.start()
	defer srv.kill()
	crashRun(t, srv, filepath.Join(data, "work"), 50, func(*rand.Rand) {
		srv.kill()
		srv.start()
	})
}

// crashRun starts n tasks through api, calls crash every few hundred
// milliseconds while they run (it kills and restarts processes), waits for
// every task to end and checks what the crashes must not have broken.
// workDir holds the tasks' sandboxes.
func crashRun(t *testing.T, api *crashServer, workDir string, n int, crash func(*rand.Rand)) {
	scriptFile := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(scriptFile, []byte(crashScript), 0o644); err != nil {
		t.Fatal(err)
	}
	api.do("POST", "/v1/workspaces/default/skills", map[string]any{"files": map[string]string{
		"SKILL.md":         "---\nname: counter\ndescription: Counts runs of its script.\n---\nRun scripts/count.sh.\n",
		"scripts/count.sh": "#!/bin/sh\necho run >> count.txt\n",
	}}, nil)
	var ag struct{ ID string }
	api.do("POST", "/v1/workspaces/default/agents", map[string]any{"name": "crasher",
		"config": map[string]any{"model": "scripted:" + scriptFile, "context": map[string]any{"window": 32000}},
		"skills": []map[string]any{{"skill": "counter"}}}, &ag)
	ids := make([]string, n)
	for i := range ids {
		var task struct{ ID string }
		api.do("POST", "/v1/workspaces/default/agents/"+ag.ID+"/tasks", map[string]any{"input": fmt.Sprint("task ", i)}, &task)
		ids[i] = task.ID
	}
	// Five clients follow their task's stream across the kills.
	var wg sync.WaitGroup
	streams := make([][]int64, 5)
	for i := range streams {
		wg.Go(func() { streams[i] = api.follow(ids[i]) })
	}

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	kills := 0
	for ; kills < 12 && !api.allDone(ids); kills++ {
		time.Sleep(time.Duration(100+rng.IntN(500)) * time.Millisecond)
		crash(rng)
	}
	// Bounded: a task's step is taken over once its heartbeat times out
	// and the retry's backoff passes, which on a loaded machine (the
	// whole suite under -race) takes longer than on a quiet one.
	const settle = 2 * time.Minute
	deadline := time.Now().Add(settle)
	for !api.allDone(ids) {
		if time.Now().After(deadline) {
			for _, id := range ids {
				var task struct {
					Status string
					Error  struct{ Code, Message string }
				}
				api.get("/v1/workspaces/default/tasks/"+id, &task)
				t.Logf("task %s: %s %s", id, task.Status, task.Error.Message)
				if task.Status == "running" || task.Status == "queued" {
					var events struct {
						Items []struct {
							Seq  int64
							Type string
						}
					}
					api.get("/v1/workspaces/default/tasks/"+id+"/events?format=json", &events)
					if n := len(events.Items); n > 0 {
						t.Logf("  its last events: %+v", events.Items[max(0, n-4):])
					}
				}
			}
			t.Fatalf("tasks not finished %s after the last kill", settle)
		}
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	t.Logf("%d kills", kills)

	resumed := 0
	for _, id := range ids {
		resumed += api.checkTask(id, workDir)
	}
	t.Logf("%d resumes", resumed)
	if resumed == 0 {
		t.Error("no task was resumed: the kills did not land while tasks ran")
	}
	for i, seqs := range streams {
		var task struct {
			LastSeq int64 `json:"last_seq"`
		}
		api.do("GET", "/v1/workspaces/default/tasks/"+ids[i], nil, &task)
		if int64(len(seqs)) != task.LastSeq {
			t.Errorf("stream of task %s saw %d entries, the log has %d", ids[i], len(seqs), task.LastSeq)
		}
		for j, s := range seqs {
			if s != int64(j+1) {
				t.Errorf("stream of task %s: entry %d has seq %d (a gap or a repeat)", ids[i], j+1, s)
				break
			}
		}
	}
}

type crashServer struct {
	t    *testing.T
	bin  string
	args []string // after the binary
	env  []string
	// addr is the API's address; for a worker (no API) it is "".
	addr string
	mu   sync.Mutex
	cmd  *exec.Cmd
	log  syncBuffer
}

const crashToken = "skd_crashtest0123456789abcdefgh"

func freeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func (s *crashServer) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, s.args...)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stderr = &s.log
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	if s.addr == "" {
		return
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://" + s.addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the server did not come up:\n%s", s.log.String())
		}
	}
}

// kill ends the server with SIGKILL: no shutdown, no cleanup.
func (s *crashServer) kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd != nil && cmd.ProcessState == nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func (s *crashServer) do(method, path string, body, out any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+s.addr+path, rd)
	req.Header.Set("Authorization", "Bearer "+crashToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// get is do that tolerates a server that is down (it is killed often).
func (s *crashServer) get(path string, out any) bool {
	req, _ := http.NewRequest("GET", "http://"+s.addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+crashToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == 200 && json.NewDecoder(resp.Body).Decode(out) == nil
}

func (s *crashServer) allDone(ids []string) bool {
	for _, id := range ids {
		var task struct{ Status string }
		if !s.get("/v1/workspaces/default/tasks/"+id, &task) || (task.Status != "completed" && task.Status != "failed" && task.Status != "cancelled") {
			return false
		}
	}
	return true
}

// follow reads a task's event stream to its end, reconnecting with
// Last-Event-ID whenever the server goes away, and returns the sequence
// numbers it received, in order.
func (s *crashServer) follow(id string) []int64 {
	var seqs []int64
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); {
		req, _ := http.NewRequest("GET", "http://"+s.addr+"/v1/workspaces/default/tasks/"+id+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+crashToken)
		if len(seqs) > 0 {
			req.Header.Set("Last-Event-ID", strconv.FormatInt(seqs[len(seqs)-1], 10))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		ended := false
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				seqs = append(seqs, n)
			}
			if line == "event: task.completed" || line == "event: task.failed" {
				ended = true
			}
		}
		resp.Body.Close()
		if ended && resp.StatusCode == 200 {
			return seqs
		}
		time.Sleep(50 * time.Millisecond)
	}
	return seqs
}

// checkTask asserts what the crashes must not have broken, and returns
// how many times the task was resumed. workDir holds the sandboxes.
func (s *crashServer) checkTask(id, workDir string) (resumed int) {
	t := s.t
	var task struct {
		Status string
		Error  struct{ Code, Message string }
	}
	s.do("GET", "/v1/workspaces/default/tasks/"+id, nil, &task)
	if task.Status != "completed" {
		// The API gives an internal error's public message only; its
		// detail is in the server's log, with the task's id.
		var lines []string
		for _, l := range strings.Split(s.log.String(), "\n") {
			if strings.Contains(l, id) {
				lines = append(lines, l)
			}
		}
		t.Errorf("task %s is %s: %s; the server logged:\n%s", id, task.Status, task.Error.Message, strings.Join(lines, "\n"))
		return 0
	}
	var log struct {
		Items []map[string]any `json:"items"`
	}
	s.do("GET", "/v1/workspaces/default/tasks/"+id+"/events?format=json", nil, &log)
	answers, results := 0, map[string]int{}
	for i, ev := range log.Items {
		if seq, _ := ev["seq"].(float64); int(seq) != i+1 {
			t.Errorf("task %s: entry %d has seq %v", id, i+1, ev["seq"])
		}
		switch ev["type"] {
		case "message":
			if ev["role"] == "assistant" {
				answers++
			}
		case "tool.result":
			results[fmt.Sprint(ev["call_id"])]++
		case "task.resumed":
			resumed++
		}
	}
	if answers != 5 {
		t.Errorf("task %s has %d model answers, the script has 5: a model call was repeated or lost", id, answers)
	}
	for call, n := range results {
		if n != 1 {
			t.Errorf("task %s: call %s has %d results", id, call, n)
		}
	}
	count, err := os.ReadFile(filepath.Join(workDir, "sandboxes", id, "workspace", "count.txt"))
	if err != nil && !os.IsNotExist(err) {
		t.Errorf("task %s: %v", id, err)
	}
	if lines := strings.Count(string(count), "run"); lines > 1 {
		t.Errorf("task %s: the counting script ran %d times; a non-idempotent call must run at most once", id, lines)
	}
	return resumed
}
