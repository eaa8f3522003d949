package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skilld/skilld/store/storetest"
)

// runAsking runs a command as on a terminal whose user types answer.
func runAsking(t *testing.T, answer string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &env{stdin: strings.NewReader(answer), stdout: &stdout, stderr: &stderr, interactive: true})
	return code, stdout.String(), stderr.String()
}

// TestTasksDeleteCommand: tasks delete refuses a task still going, asks on
// a terminal (no, then yes), does not ask from a script or with --yes, and
// leaves the task not found.
func TestTasksDeleteCommand(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	member := strings.TrimSpace(s.ok(t, s.admin, "default", "tokens", "create", "starter", "--role", "member"))
	viewer := strings.TrimSpace(s.ok(t, s.admin, "default", "tokens", "create", "watcher", "--role", "viewer"))
	s.ok(t, member, "default", "agents", "create", "bot", "--model", "test:m")
	// No executor runs here: started tasks stay queued until cancelled.
	start := func() string { return s.okJSON(t, member, "default", "tasks", "start", "bot", "go")["id"].(string) }
	flags := func(args ...string) []string {
		return append(args, "--server", s.url, "--token", member, "--workspace", "default")
	}

	id := start()
	if code, _, errOut := s.cli(t, member, "default", "tasks", "delete", id, "--yes"); code != exitFailure || !strings.HasPrefix(errOut, "skilld: conflict: ") || !strings.Contains(errOut, "cancel it first") {
		t.Errorf("deleting a queued task: exit %d %s", code, errOut)
	}
	s.ok(t, member, "default", "tasks", "cancel", id)
	if code, _, errOut := s.cli(t, viewer, "default", "tasks", "delete", id); code != exitFailure || !strings.HasPrefix(errOut, "skilld: forbidden: ") {
		t.Errorf("a viewer deleting: exit %d %s", code, errOut)
	}
	if code, _, errOut := runAsking(t, "n\n", flags("tasks", "delete", id)...); code != exitFailure || !strings.Contains(errOut, "delete task "+id+" with its log and stored outputs? [y/N] ") ||
		!strings.Contains(errOut, "not deleted") {
		t.Errorf("answering no: exit %d %s", code, errOut)
	}
	s.ok(t, member, "default", "tasks", "get", id)
	if code, _, errOut := runAsking(t, "y\n", flags("tasks", "delete", id)...); code != exitOK || !strings.HasSuffix(errOut, "deleted task "+id+"\n") {
		t.Errorf("answering yes: exit %d %s", code, errOut)
	}
	if code, _, errOut := s.cli(t, member, "default", "tasks", "get", id); code != exitFailure || !strings.HasPrefix(errOut, "skilld: not_found: ") {
		t.Errorf("the deleted task: exit %d %s", code, errOut)
	}

	// From a script, and with --yes on a terminal, nothing is asked.
	for _, del := range []func(id string) (int, string, string){
		func(id string) (int, string, string) { return s.cli(t, member, "default", "tasks", "delete", id) },
		func(id string) (int, string, string) {
			return runAsking(t, "", flags("tasks", "delete", id, "--yes")...)
		},
	} {
		id := start()
		s.ok(t, member, "default", "tasks", "cancel", id)
		if code, _, errOut := del(id); code != exitOK || strings.Contains(errOut, "[y/N]") {
			t.Errorf("deleting without a question: exit %d %s", code, errOut)
		}
	}
	if code, _, _ := s.cli(t, member, "default", "tasks", "delete"); code != exitUsage {
		t.Errorf("tasks delete without an ID: exit %d", code)
	}
}

// TestWorkspacesUpdateCommand: instance admins set a workspace's task
// retention; a bad value is the server's refusal, no setting a usage error.
func TestWorkspacesUpdateCommand(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	s.ok(t, s.admin, "default", "workspaces", "create", "team")
	if out := s.ok(t, s.admin, "", "workspaces", "update", "team", "--task-retention", "720h"); !strings.Contains(out, "team") || !strings.Contains(out, "720h") {
		t.Errorf("workspaces update:\n%s", out)
	}
	if got := s.okJSON(t, s.admin, "", "workspaces", "update", "team", "--task-retention", ""); got["task_retention"] != nil || got["name"] != "team" {
		t.Errorf("back to the server's: %v", got)
	}
	if code, _, errOut := s.cli(t, s.admin, "", "workspaces", "update", "team", "--task-retention", "5s"); code != exitFailure || !strings.Contains(errOut, "invalid") {
		t.Errorf("a retention of 5s: exit %d %s", code, errOut)
	}
	if code, _, errOut := s.cli(t, s.admin, "", "workspaces", "update", "team"); code != exitUsage || !strings.Contains(errOut, "--task-retention") {
		t.Errorf("nothing to change: exit %d %s", code, errOut)
	}
	if got := s.okJSON(t, s.admin, "", "workspaces", "update", "team", "--storage-quota", "2GiB"); got["storage_quota"] != float64(2<<30) {
		t.Errorf("a quota of 2GiB: %v", got)
	}
	if out := s.ok(t, s.admin, "", "workspaces", "update", "team", "--storage-quota", "0"); !strings.Contains(out, "STORAGE QUOTA") || !strings.Contains(out, "none") {
		t.Errorf("no quota, as a table:\n%s", out)
	}
	if got := s.okJSON(t, s.admin, "", "workspaces", "update", "team", "--storage-quota", "server"); got["storage_quota"] != nil {
		t.Errorf("back to the server's quota: %v", got)
	}
	if code, _, errOut := s.cli(t, s.admin, "", "workspaces", "update", "team", "--storage-quota", "lots"); code != exitUsage || !strings.Contains(errOut, "--storage-quota") {
		t.Errorf("a quota of lots: exit %d %s", code, errOut)
	}
	if got := s.okJSON(t, s.admin, "", "workspaces", "update", "team", "--lenient-lengths"); got["lenient_lengths"] != true {
		t.Errorf("lenient lengths on: %v", got)
	}
	if got := s.okJSON(t, s.admin, "", "workspaces", "update", "team", "--lenient-lengths=false"); got["lenient_lengths"] != nil {
		t.Errorf("lenient lengths off: %v", got)
	}
	out := s.ok(t, s.admin, "", "workspaces", "usage", "team")
	for _, want := range []string{"WORKSPACE", "team", "TASKS", "0 (none)", "STORED", "0 bytes", "QUOTA"} {
		if !strings.Contains(out, want) {
			t.Errorf("workspaces usage does not say %q:\n%s", want, out)
		}
	}
	if u := s.okJSON(t, s.admin, "default", "workspaces", "usage"); u["workspace"] != "default" || u["quota_source"] != "server" {
		t.Errorf("workspaces usage of the token's workspace: %v", u)
	}
}
