package executor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/secretkey"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/sqlitestore"
)

// TestSkillGrants: a skill's skilld.yaml asks for a host and a secret.
// Before an admin approves, its commands reach neither; once approved,
// a command run while the skill is loaded reaches the host through the
// sandbox's proxy and has the secret in its environment; once the skill
// unloads (context placement, one skill at a time), the next command has
// neither again. The secret's value is nowhere in what the server keeps
// or shows: not in the database's files, the blob store, the events, the
// task's output, the UI's task pages and event streams or the model's
// requests.
func TestSkillGrants(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	root := os.Geteuid() == 0
	dbDir := t.TempDir()
	open := func(t *testing.T) store.Store {
		s, err := sqlitestore.Open(t.Context(), filepath.Join(dbDir, "skilld.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	key, _, err := secretkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureOf(t, open, func(c *executor.Config) { c.AllowNetwork = true }, service.Config{Secrets: &secretkey.Keyring{Current: key}})
	ctx := t.Context()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	host := "127.0.0.1:" + port

	const secret = "tok-5f1d2c9e-never-logged"
	if err := f.svc.PutSecret(ctx, f.actor, service.PutSecretParams{SecretRef: service.SecretRef{Name: "SKILL_TOKEN"}, Value: secret}); err != nil {
		t.Fatal(err)
	}
	netSkill, err := f.svc.CreateSkill(ctx, f.actor, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md":    "---\nname: fetcher\ndescription: Fetches the report from the team's server with the team's token.\n---\nRun the fetch.\n",
		"skilld.yaml": "network: [\"" + host + "\"]\nsecrets: [SKILL_TOKEN]\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.svc.CreateSkill(ctx, f.actor, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": "---\nname: notes\ndescription: Writes notes.\n---\nWrite notes.\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := f.svc.CreateAgent(ctx, f.actor, service.AgentParams{Name: "grants",
		Config: skilld.AgentConfig{Model: "test:m", Context: skilld.ContextSettings{Placement: skilld.PlacementContext, MaxLoaded: 1}},
		Skills: []service.AgentSkillRef{{Skill: netSkill.ID}, {Skill: other.ID}}})
	if err != nil {
		t.Fatal(err)
	}

	// Each probe prints whether the host answered and a digest of the
	// secret variable, so that the value itself is never printed.
	probe := "curl -s -m 5 -o /dev/null -w '%{http_code}' http://" + host + "/; echo; printf %s \"$SKILL_TOKEN\" | sha256sum | cut -c1-16"
	digest := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:])[:16] }
	none, granted := "000\n"+digest("")+"\n", "200\n"+digest(secret)+"\n"

	var requests []string
	run := func(steps ...func(context.Context, *model.Request) (*model.Response, error)) ([]string, *skilld.Task) {
		t.Helper()
		var outs []string
		for i, s := range steps {
			s := s
			steps[i] = func(ctx context.Context, req *model.Request) (*model.Response, error) {
				var b strings.Builder
				for _, m := range req.Messages {
					b.WriteString(m.Content)
				}
				requests = append(requests, req.System+b.String())
				if last := req.Messages[len(req.Messages)-1]; last.ToolName == agent.ToolShell {
					outs = append(outs, last.Content)
				}
				return s(ctx, req)
			}
		}
		f.model.steps = append(f.model.steps, steps...)
		task, err := f.svc.RunTask(ctx, f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "fetch the report"})
		if err != nil {
			t.Fatal(err)
		}
		return outs, f.wait(t, task.ID, skilld.TaskCompleted)
	}
	shell := call(agent.ToolShell, map[string]string{"command": probe})
	activate := func(name string) func(context.Context, *model.Request) (*model.Response, error) {
		return call(agent.ActivateSkill, map[string]string{"skill_name": name})
	}

	// Not approved: the request is visible, nothing is granted.
	perms, err := f.svc.GetSkillPermissions(ctx, f.actor, service.GetSkillParams{SkillRef: service.SkillRef{ID: netSkill.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if perms.State != service.PermissionsNeeded {
		t.Fatalf("permissions before approval: %+v", perms)
	}
	outs, _ := run(activate("fetcher"), shell, answer("done"))
	if len(outs) != 1 || !strings.HasPrefix(outs[0], none) {
		t.Errorf("before approval: %q", outs)
	}

	if _, err := f.svc.ApprovePermissions(ctx, f.actor, service.ApprovePermissionsParams{SkillRef: service.SkillRef{ID: netSkill.ID}, Digest: perms.Digest}); err != nil {
		t.Fatal(err)
	}
	outs, task := run(activate("fetcher"), shell, activate("notes"), shell, answer("done"))
	want := granted
	if !root {
		// The proxy needs root: the command runs without the host and
		// its result says why; the secret still reaches it.
		want = "000\n" + digest(secret) + "\n[the hosts granted to the loaded skills (" + host + ") were not opened: "
	}
	if len(outs) != 2 {
		t.Fatalf("shell results: %q", outs)
	}
	if !strings.HasPrefix(outs[0], want) {
		t.Errorf("loaded and approved: %q, want %q first", outs[0], want)
	}
	if !strings.HasPrefix(outs[1], none) {
		t.Errorf("after the skill unloaded: %q", outs[1])
	}

	// The events name what each command got, never the value.
	log, err := f.db.TaskLogList(ctx, &store.TaskLogListParams{TaskID: task.ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	grants := 0
	for _, e := range log {
		if bytes.Contains(e.Payload, []byte(`"tool.granted"`)) {
			grants++
			if !bytes.Contains(e.Payload, []byte(`"SKILL_TOKEN"`)) || !bytes.Contains(e.Payload, []byte(host)) {
				t.Errorf("tool.granted: %s", e.Payload)
			}
		}
	}
	if grants != 1 {
		t.Errorf("%d tool.granted events, want 1 (the command run while the skill was loaded)", grants)
	}

	// A command that prints the secret: the model reads its name instead.
	outs, _ = run(activate("fetcher"), call(agent.ToolShell, map[string]string{"command": `echo "token is $SKILL_TOKEN"; echo "$SKILL_TOKEN" > leaked.txt`}),
		call(agent.ToolReadFile, map[string]string{"path": "leaked.txt"}), answer("the token is "+secret))
	if len(outs) != 1 || !strings.Contains(outs[0], "token is [secret SKILL_TOKEN]") {
		t.Errorf("a printed secret: %q", outs)
	}
	f.exec.Wait()

	for i, r := range requests {
		if strings.Contains(r, secret) {
			t.Errorf("model request %d holds the secret", i)
		}
	}
	tasks, err := f.svc.ListTasks(ctx, f.actor, service.ListTasksParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks.Items {
		if strings.Contains(tk.Output, secret) {
			t.Errorf("task %s's output holds the secret", tk.ID)
		}
	}
	// Every page of the UI about the tasks, their event streams included.
	for path, body := range uiPages(t, f) {
		if strings.Contains(body, secret) {
			t.Errorf("UI page %s holds the secret", path)
		}
	}
	// Every file the server keeps, the database's and the blobs'.
	for _, dir := range []string{dbDir, f.blobDir} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the secret", path)
			}
			return nil
		})
	}
}
