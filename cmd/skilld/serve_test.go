package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a command writing while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// await returns the text once it holds sub, as serve prints some lines
// (the sandbox's) after it listens; the test fails after 30s without.
func (s *syncBuffer) await(t testing.TB, sub string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if text := s.String(); strings.Contains(text, sub) {
			return text
		}
	}
	t.Fatalf("no %q in:\n%s", sub, s.String())
	return ""
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServe(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	// With a retention, the sweeper runs from the start and stops with
	// the server.
	base, stderr, stop := startServe(t, "--data", data, "--task-retention", "720h")
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var health struct{ Status string }
	json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if resp.StatusCode != 200 || health.Status != "ok" {
		t.Errorf("healthz: %d %+v", resp.StatusCode, health)
	}
	if code := stop(); code != exitOK {
		t.Errorf("serve exited %d after a stop signal: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), filepath.ToSlash(filepath.Join(data, "skilld.db"))) {
		t.Errorf("startup line should name the database: %s", stderr.String())
	}
}

func TestServeBadStorage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"serve", "--db", "mysql://h/db"},
		{"serve", "--data", t.TempDir(), "--blobs", "ftp://x"},
		{"serve", "--data", t.TempDir(), "--db", "postgres://u:secret@127.0.0.1:1/db?connect_timeout=1"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != exitFailure || strings.Contains(errOut, "secret") || !strings.HasPrefix(errOut, "skilld serve: ") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	code, out, errOut := runCLI(t, "migrate", "--status", "--data", data)
	if code != exitOK || !strings.Contains(out, "0001_init  pending") {
		t.Fatalf("status on an empty database: exit %d\n%s%s", code, out, errOut)
	}
	pending := strings.Count(out, "  pending")
	code, out, _ = runCLI(t, "migrate", "--data", data)
	if code != exitOK || !strings.Contains(out, fmt.Sprintf("applied %d migration(s)", pending)) ||
		!strings.Contains(out, "0001_init  applied") || strings.Contains(out, "pending") {
		t.Fatalf("migrate (%d pending): exit %d\n%s", pending, code, out)
	}
	code, out, _ = runCLI(t, "migrate", "--data", data)
	if code != exitOK || !strings.Contains(out, "applied 0 migration(s)") {
		t.Errorf("migrate again: exit %d\n%s", code, out)
	}
}

func TestFsckCommand(t *testing.T) {
	t.Parallel()
	data := migratedDataDir(t)
	code, out, errOut := runCLI(t, "fsck", "--data", data)
	if code != exitOK || !strings.Contains(out, "checked 0 blobs") || !strings.Contains(out, "0 damaged, 0 missing") {
		t.Errorf("empty store: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "fsck", "--data", data, "--repair", "--json")
	if code != exitOK || !strings.Contains(out, `"removed": []`) {
		t.Errorf("repair on an empty store: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "fsck", "--data", data, "--grace", "soon"); code != exitUsage {
		t.Errorf("a bad grace: exit %d %s", code, errOut)
	}
}

// TestServeTaskRetentionFlag: serve refuses a retention the service would
// not take, from the flag or the environment, before opening anything.
func TestServeTaskRetentionFlag(t *testing.T) {
	for _, args := range [][]string{{"--task-retention", "30s"}, {"--task-retention", "-1h"}} {
		code, _, errOut := runCLI(t, append([]string{"serve", "--data", t.TempDir()}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "--task-retention") {
			t.Errorf("serve %q: exit %d %s", args, code, errOut)
		}
	}
	t.Setenv("SKILLD_TASK_RETENTION", "a week")
	if code, _, errOut := runCLI(t, "serve", "--data", t.TempDir()); code != exitUsage || !strings.Contains(errOut, "SKILLD_TASK_RETENTION") {
		t.Errorf("serve with SKILLD_TASK_RETENTION=\"a week\": exit %d %s", code, errOut)
	}
}
