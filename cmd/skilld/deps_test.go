package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// TestSkillDependenciesInTasks: a skill carrying requirements.txt and a
// package.json with its lockfile has them installed when a task activates
// it (skill.environment preparing, building while it installs, then ready), from the server's
// configured indexes through the proxy, and its script imports them; a
// task of another workspace activating the same package finds the layer
// built.
var progressed = regexp.MustCompile(`^preparing( building)* ready$`)

func TestSkillDependenciesInTasks(t *testing.T) {
	bwraptest.Require(t)
	if os.Geteuid() != 0 {
		t.Skip("installs take the network through the proxy, which takes a root server (TestDependencies checks the refusal)")
	}
	ix := bwraptest.NewPackageIndex(t)
	secret := "skd_deps" + strings.Repeat("d", 24)
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", secret)
	t.Setenv("SKILLD_ALLOW_SCRIPTED_MODELS", "1")
	data := t.TempDir()
	t.Cleanup(func() { bwraptest.UnmountAll(t, data) })
	base, _, stop := startServe(t, "--data", data, "--python-index-url", ix.URL+"/simple", "--npm-registry", ix.URL+"/")
	defer stop()
	files := map[string]string{
		"SKILL.md":          "---\nname: with-deps\ndescription: Prints what its dependencies say.\n---\nRun scripts/run.sh.\n",
		"requirements.txt":  "probe-pkg==1.0\n",
		"package.json":      `{"name": "skill", "version": "1.0.0", "dependencies": {"probe-node": "1.0.0"}}`,
		"package-lock.json": ix.Lockfile(),
		"scripts/run.sh":    "python3 -c 'import probe_pkg; print(\"python\", probe_pkg.VALUE)'\nnode -e 'console.log(\"node\", require(\"probe-node\"))'\n",
	}
	script := writeModel(t, []string{
		`{"tool_calls": [{"name": "activate_skill", "arguments": {"skill_name": "with-deps"}}]}`,
		shellStep("sh skills/with-deps-*/scripts/run.sh"),
		`{"text": "done"}`,
	})
	cli := func(ws string, args ...string) {
		t.Helper()
		if code, out, errOut := runCLI(t, append([]string{args[0], args[1], "--server", base, "--token", secret, "--workspace", ws}, args[2:]...)...); code != exitOK {
			t.Fatalf("skilld %q: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	cli("default", "workspaces", "create", "team-b")
	for i, ws := range []string{"default", "team-b"} {
		body, _ := json.Marshal(map[string]any{"files": files})
		apiDo(t, base, secret, ws, "POST", "/skills", body)
		body, _ = json.Marshal(map[string]any{"name": "user", "config": map[string]any{"model": "scripted:" + script, "context": map[string]any{"window": 100000}},
			"skills": []any{map[string]string{"skill": "with-deps"}}})
		apiDo(t, base, secret, ws, "POST", "/agents", body)
		task, events := runTaskEvents(t, base, secret, ws, "user")
		var states []string
		var ready map[string]any
		var output string
		for _, e := range events {
			switch {
			case e["type"] == "skill.environment":
				states = append(states, e["state"].(string))
				ready = e
			case e["type"] == "message" && e["role"] == "tool":
				output, _ = e["content"].(string)
			}
		}
		// building events (progress) come every two seconds of an install.
		if task["status"] != "completed" || !progressed.MatchString(strings.Join(states, " ")) || ready["cached"] != (i == 1) {
			t.Errorf("workspace %s: %v; environment %q, %v", ws, task["status"], states, ready)
		}
		if !strings.HasPrefix(output, "python 42\nnode 42\n") {
			t.Errorf("workspace %s: the script said %q", ws, output)
		}
	}
}
