package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld/internal/testbin"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// term sends SIGTERM and returns the exit code and how long the
// process took to exit.
func (s *crashServer) term() (int, time.Duration) {
	s.t.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		s.t.Fatalf("serve did not exit two minutes after SIGTERM:\n%s", s.log.String())
	}
	return cmd.ProcessState.ExitCode(), time.Since(start)
}

// call sends a request with token and decodes a JSON answer into out; it
// returns the status, 0 when the server could not be reached.
func (s *crashServer) call(method, path, token string, body, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(s.t.Context(), method, "http://"+s.addr+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

// startTask creates an agent whose scripted model plays script and starts a
// task of it, returning the task's id.
func (s *crashServer) startTask(name, script string) string {
	s.t.Helper()
	file := filepath.Join(s.t.TempDir(), name+".json")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		s.t.Fatal(err)
	}
	var ag, task struct{ ID string }
	if st := s.call("POST", "/v1/workspaces/default/agents", crashToken, map[string]any{"name": name,
		"config": map[string]any{"model": "scripted:" + file, "context": map[string]any{"window": 32000}}}, &ag); st != 201 {
		s.t.Fatalf("create agent %s: %d", name, st)
	}
	if st := s.call("POST", "/v1/workspaces/default/agents/"+ag.ID+"/tasks", crashToken, map[string]any{"input": "go"}, &task); st != 201 {
		s.t.Fatalf("start a task of %s: %d", name, st)
	}
	return task.ID
}

// waitTask polls a task until its status is one of want.
func (s *crashServer) waitTask(id string, limit time.Duration, want ...string) string {
	s.t.Helper()
	var task struct{ Status string }
	for deadline := time.Now().Add(limit); ; time.Sleep(50 * time.Millisecond) {
		task.Status = ""
		s.call("GET", "/v1/workspaces/default/tasks/"+id, crashToken, nil, &task)
		for _, w := range want {
			if task.Status == w {
				return w
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("task %s is %q after %s, want one of %v\n%s", id, task.Status, limit, want, s.log.String())
		}
	}
}

// token creates a token of role in workspace default.
func (s *crashServer) token(name, role string) string {
	s.t.Helper()
	var tok struct{ Token string }
	if st := s.call("POST", "/v1/workspaces/default/tokens", crashToken, map[string]any{"name": name, "role": role}, &tok); st != 201 {
		s.t.Fatalf("create token: %d", st)
	}
	return tok.Token
}

// openStream opens a task's event stream and reads it to its end in the
// background; the returned channel gets everything it sent.
func (s *crashServer) openStream(ctx context.Context, taskID, token string) (<-chan []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+s.addr+"/v1/workspaces/default/tasks/"+taskID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, fmt.Errorf("stream: %s", resp.Status)
	}
	out := make(chan []byte, 1)
	go func() {
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- b
	}()
	return out, nil
}

// TestServeShutdownWithStreams: SIGTERM to a server with 50 open event
// streams, a task that outlives --shutdown-timeout, one that finishes
// within it and `skilld tasks follow` on the first. The process exits 0
// within --shutdown-timeout plus a second; every stream got the shutdown
// event; the short task completed; after a restart the long one resumes
// and completes, and the follower, having reconnected, saw it end.
func TestServeShutdownWithStreams(t *testing.T) {
	bwraptest.Require(t)
	const timeout = 6 * time.Second
	bin := testbin.Skilld(t)
	data := t.TempDir()
	t.Cleanup(func() { bwraptest.UnmountAll(t, data) })
	addr := freeAddr(t)
	srv := &crashServer{t: t, bin: bin, addr: addr, args: []string{"serve", "--addr", addr, "--data", data, "--shutdown-timeout", timeout.String()},
		env: []string{"SKILLD_BOOTSTRAP_TOKEN=" + crashToken, "SKILLD_ALLOW_SCRIPTED_MODELS=1"}}
	srv.start()
	defer srv.kill()

	long := srv.startTask("sleeper", `[{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 300"}}]}, {"text": "woke up"}]`)
	srv.waitTask(long, 30*time.Second, "running")
	viewer := srv.token("watcher", "viewer")

	// The CLI follows the long task across the stop and the restart.
	var followOut, followErr syncBuffer
	follow := exec.Command(bin, "tasks", "follow", long)
	follow.Env = append(os.Environ(), "SKILLD_SERVER=http://"+addr, "SKILLD_TOKEN="+crashToken, "SKILLD_WORKSPACE=")
	follow.Stdout, follow.Stderr = &followOut, &followErr
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer follow.Process.Kill()

	// 50 streams, from two tokens (each may hold 32).
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var streams []<-chan []byte
	for i := range 50 {
		token := crashToken
		if i%2 == 1 {
			token = viewer
		}
		ch, err := srv.openStream(ctx, long, token)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		streams = append(streams, ch)
	}
	short := srv.startTask("quick", `[{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 1"}}]}, {"text": "quick"}]`)
	srv.waitTask(short, 30*time.Second, "running", "completed")
	// The follower is connected once it has shown the task's start.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(followOut.String(), "shell"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tasks follow showed nothing:\n%s\n%s", followOut.String(), followErr.String())
		}
	}

	code, took := srv.term()
	t.Logf("SIGTERM with 50 streams and a running task: exit %d after %s (--shutdown-timeout %s)", code, took.Round(time.Millisecond), timeout)
	if code != 0 {
		t.Errorf("serve exited %d:\n%s", code, srv.log.String())
	}
	if took > timeout+time.Second {
		t.Errorf("serve took %s to exit, more than --shutdown-timeout %s plus a second", took, timeout)
	}
	for i, ch := range streams {
		select {
		case b := <-ch:
			if !bytes.Contains(b, []byte("retry: 5000\nevent: shutdown\ndata: {\"code\":\"unavailable\"")) {
				t.Errorf("stream %d ended without the shutdown event:\n%s", i, b)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("stream %d still open after the server exited", i)
		}
	}

	srv.start()
	if st := srv.waitTask(short, 10*time.Second, "completed", "failed", "cancelled"); st != "completed" {
		t.Errorf("the task that could finish within the shutdown is %s", st)
	}
	srv.waitTask(long, time.Minute, "completed")
	var log struct {
		Items []struct{ Type string } `json:"items"`
	}
	srv.call("GET", "/v1/workspaces/default/tasks/"+long+"/events?format=json", crashToken, nil, &log)
	resumed := 0
	for _, ev := range log.Items {
		if ev.Type == "task.resumed" {
			resumed++
		}
	}
	if resumed != 1 {
		t.Errorf("the long task was resumed %d times, want once", resumed)
	}

	done := make(chan error, 1)
	go func() { done <- follow.Wait() }()
	select {
	case err := <-done:
		t.Logf("tasks follow said on stderr:\n%s", followErr.String())
		if err != nil || !strings.Contains(followOut.String(), "completed") || !strings.Contains(followErr.String(), "the server is shutting down") {
			t.Errorf("tasks follow: %v\nstdout:\n%s\nstderr:\n%s", err, followOut.String(), followErr.String())
		}
		if n := strings.Count(followOut.String(), "sleep 300"); n != 1 {
			t.Errorf("tasks follow showed the shell call %d times:\n%s", n, followOut.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("tasks follow did not end after the task did:\n%s\n%s", followOut.String(), followErr.String())
	}
}

// TestServeStreamsLowDescriptors: a server under a descriptor limit of
// 256 derives its limits from it; streams past them are refused, 429 for
// a token at its own limit and 503 for the server's, each with
// Retry-After, while ordinary requests keep working (no 500, no
// "unable to open database file"), a task runs to its end, and a stop is
// clean.
func TestServeStreamsLowDescriptors(t *testing.T) {
	bwraptest.Require(t)
	const nofile = 256
	bin := testbin.Skilld(t)
	data := t.TempDir()
	t.Cleanup(func() { bwraptest.UnmountAll(t, data) })
	addr := freeAddr(t)
	// The shell lowers the limit and becomes skilld, so the signal goes to
	// skilld itself.
	srv := &crashServer{t: t, bin: "sh", addr: addr,
		args: []string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile), bin, "serve", "--addr", addr, "--data", data, "--max-running-tasks", "4", "--shutdown-timeout", "1s"},
		env:  []string{"SKILLD_BOOTSTRAP_TOKEN=" + crashToken, "SKILLD_ALLOW_SCRIPTED_MODELS=1"}}
	srv.start()
	defer srv.kill()
	// 256 − 128 − 4×12 = 80 left: half for streams, a quarter for sessions.
	if want := "at most 40 event streams and 20 MCP sessions open at once, derived from a descriptor limit of 256"; !strings.Contains(srv.log.String(), want) {
		t.Fatalf("the startup lines do not say %q:\n%s", want, srv.log.String())
	}

	long := srv.startTask("sleeper", `[{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 300"}}]}, {"text": "woke up"}]`)
	srv.waitTask(long, 30*time.Second, "running")
	viewer, member := srv.token("watcher", "viewer"), srv.token("other", "member")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for i := range 40 { // the admin's 32, then the viewer's 8: the server's 40
		token := crashToken
		if i >= 32 {
			token = viewer
		}
		if _, err := srv.openStream(ctx, long, token); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	short := srv.startTask("quick", `[{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 1; echo ok"}}]}, {"text": "quick"}]`)

	// 400 more attempts, 16 at a time, among ordinary requests.
	const attempts, clients = 400, 16
	var mu sync.Mutex
	statuses := map[string]int{}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < attempts; i += clients {
				token := []string{crashToken, viewer, member}[i%3]
				req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+addr+"/v1/workspaces/default/tasks/"+long+"/events", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				key := "error"
				if err == nil {
					key = fmt.Sprintf("stream %d Retry-After %s", resp.StatusCode, resp.Header.Get("Retry-After"))
					resp.Body.Close()
				}
				list := srv.call("GET", "/v1/workspaces/default/skills", member, nil, nil)
				mu.Lock()
				statuses[key]++
				statuses[fmt.Sprint("list ", list)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("answers: %v", statuses)
	// The admin holds its 32: its attempts are its own fault (429); the
	// others' meet the server's limit (503).
	if statuses["stream 429 Retry-After 5"] != 134 || statuses["stream 503 Retry-After 5"] != attempts-134 || statuses["list 200"] != attempts {
		t.Errorf("answers %v; want %d × 429 and %d × 503, each with Retry-After, and every list 200", statuses, 134, attempts-134)
	}
	if st := srv.waitTask(short, time.Minute, "completed", "failed", "cancelled"); st != "completed" {
		t.Errorf("a task started under the limit is %s", st)
	}
	if st := srv.call("GET", "/healthz", crashToken, nil, nil); st != 200 {
		t.Errorf("healthz: %d", st)
	}
	cancel()
	if code, took := srv.term(); code != 0 {
		t.Errorf("serve exited %d after %s", code, took)
	}
	for _, bad := range []string{"status=500", "unable to open database file", "too many open files", "level=ERROR"} {
		if strings.Contains(srv.log.String(), bad) {
			t.Errorf("the server logged %q:\n%s", bad, srv.log.String())
		}
	}
}
