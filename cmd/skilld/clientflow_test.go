package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skilld/skilld/store/storetest"
)

// TestClientCommands runs the acceptance flow through the CLI, in-process,
// against a real server, on every database driver.
func TestClientCommands(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) { clientFlow(t, newAPIServer(t, d.Open)) })
	}
}

func clientFlow(t *testing.T, s *apiServer) {
	admin := s.admin
	if out := s.ok(t, admin, "default", "workspaces", "create", "team-b"); !strings.Contains(out, "team-b") {
		t.Errorf("workspaces create: %s", out)
	}
	if ws := s.okJSON(t, admin, "default", "workspaces", "update", "team-b", "--max-queued-tasks", "50"); ws["name"] != "team-b" || ws["max_queued_tasks"] != 50.0 || ws["max_running_tasks"] != nil {
		t.Errorf("workspaces update: %v", ws)
	}
	if out := s.ok(t, admin, "default", "workspaces", "update", "team-b", "--max-running-tasks", "0"); !strings.Contains(out, "none") || !strings.Contains(out, "50") {
		t.Errorf("workspaces update, as a table: %s", out)
	}
	member := strings.TrimSpace(s.ok(t, admin, "team-b", "tokens", "create", "ci", "--role", "member"))
	viewer := strings.TrimSpace(s.ok(t, admin, "team-b", "tokens", "create", "ro", "--role", "viewer"))
	wsAdmin := strings.TrimSpace(s.ok(t, admin, "team-b", "tokens", "create", "boss", "--role", "admin"))
	if !strings.HasPrefix(member, "skd_") || strings.Contains(member, "\n") {
		t.Fatalf("tokens create printed %q", member)
	}
	if out := s.ok(t, wsAdmin, "team-b", "tokens", "list"); !strings.Contains(out, "ci") || !strings.Contains(out, "viewer") {
		t.Errorf("tokens list: %s", out)
	}

	// create from a folder; a binary file is refused with a hint.
	dir := t.TempDir()
	pdf := filepath.Join(dir, "pdf-tools")
	writeFiles(t, pdf, map[string]string{"SKILL.md": skillText("pdf-tools", "Work with PDFs."), "scripts/run.sh": "#!/bin/sh\necho run\n"})
	sk := s.okJSON(t, member, "team-b", "skills", "create", pdf)
	id := sk["id"].(string)
	if sk["name"] != "pdf-tools" || sk["version"] != 1.0 {
		t.Errorf("skills create: %v", sk)
	}
	bin := filepath.Join(dir, "with-binary")
	writeFiles(t, bin, map[string]string{"SKILL.md": skillText("with-binary", "Has an image.")})
	os.WriteFile(filepath.Join(bin, "logo.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00"), 0o644)
	if code, _, errOut := s.cli(t, member, "team-b", "skills", "create", bin); code != exitUsage || !strings.Contains(errOut, "skilld skills upload") {
		t.Errorf("create with a binary file: exit %d, %s", code, errOut)
	}
	// a git checkout is refused by both, naming the way to send it.
	repo := filepath.Join(dir, "in-git")
	writeFiles(t, repo, map[string]string{"SKILL.md": skillText("in-git", "Kept in git."), ".git/HEAD": "ref: refs/heads/main\n"})
	for _, cmd := range []string{"create", "upload"} {
		if code, _, errOut := s.cli(t, member, "team-b", "skills", cmd, repo); code != exitUsage || !strings.Contains(errOut, "git checkout") || !strings.Contains(errOut, "git -C "+repo+" archive") {
			t.Errorf("%s of a git checkout: exit %d, %s", cmd, code, errOut)
		}
	}
	// upload the same folder (zipped in memory) and an archive file.
	code, out, errOut := s.cli(t, member, "team-b", "skills", "upload", bin)
	if code != exitOK || !strings.Contains(errOut, "uploading") || !strings.Contains(out, "with-binary") {
		t.Errorf("upload of a folder: exit %d\n%s%s", code, out, errOut)
	}
	archive := filepath.Join(dir, "zipped.zip")
	os.WriteFile(archive, zipBytes(t, map[string]string{"zipped/SKILL.md": skillText("zipped", "From a zip.")}), 0o644)
	s.ok(t, member, "team-b", "skills", "upload", archive, "--description", "Uploaded.")

	// list, files, cat.
	if out := s.ok(t, viewer, "team-b", "skills", "list"); !strings.Contains(out, "pdf-tools") || !strings.Contains(out, "1–3 of 3") {
		t.Errorf("skills list:\n%s", out)
	}
	if l := s.okJSON(t, viewer, "team-b", "skills", "list", "--source-type", "zip"); l["total"] != 2.0 {
		t.Errorf("skills list --source-type zip: %v", l)
	}
	if out := s.ok(t, viewer, "team-b", "skills", "files", id); !strings.Contains(out, "scripts/run.sh") {
		t.Errorf("skills files: %s", out)
	}
	if out := s.ok(t, viewer, "team-b", "skills", "cat", id, "scripts/run.sh"); out != "#!/bin/sh\necho run\n" {
		t.Errorf("skills cat: %q", out)
	}
	if out := s.ok(t, viewer, "team-b", "skills", "cat", "pdf-tools"); !strings.HasPrefix(out, "---\nname: pdf-tools") {
		t.Errorf("skills cat of SKILL.md: %q", out)
	}

	// edit, versions, restore.
	writeFiles(t, pdf, map[string]string{"SKILL.md": skillText("pdf-tools", "Work with PDFs, better.")})
	if v := s.okJSON(t, member, "team-b", "skills", "edit", id, pdf, "--message", "better"); v["version"] != 2.0 {
		t.Errorf("skills edit: %v", v)
	}
	if out := s.ok(t, viewer, "team-b", "skills", "versions", id); !strings.Contains(out, "better") {
		t.Errorf("skills versions: %s", out)
	}
	if v := s.okJSON(t, member, "team-b", "skills", "restore", id, "1"); v["version"] != 3.0 {
		t.Errorf("skills restore: %v", v)
	}

	// catalog: registry, publish, install, update.
	s.ok(t, admin, "team-b", "catalog", "create-registry", "acme", "--trust", "community")
	lint := filepath.Join(dir, "lint")
	writeFiles(t, lint, map[string]string{"SKILL.md": skillText("lint", "Lint code.")})
	if out := s.ok(t, admin, "team-b", "catalog", "publish", "acme", lint); !strings.Contains(out, "acme/lint") {
		t.Errorf("catalog publish: %s", out)
	}
	if out := s.ok(t, viewer, "team-b", "catalog", "items", "--registry", "acme"); !strings.Contains(out, "acme/lint") {
		t.Errorf("catalog items: %s", out)
	}
	inst := s.okJSON(t, member, "team-b", "skills", "install", "acme/lint")
	if inst["update_available"] != false || inst["catalog_item"] != "acme/lint" {
		t.Errorf("skills install: %v", inst)
	}
	writeFiles(t, lint, map[string]string{"SKILL.md": skillText("lint", "Lint code, v2.")})
	s.ok(t, admin, "team-b", "catalog", "publish", "acme", lint)
	if out := s.ok(t, viewer, "team-b", "skills", "get", "lint"); !strings.Contains(out, "update available  true") {
		t.Errorf("skills get after a new publish:\n%s", out)
	}
	if code, _, errOut := s.cli(t, member, "team-b", "skills", "update", "lint"); code != exitFailure || !strings.HasPrefix(errOut, "skilld: forbidden: ") {
		t.Errorf("update as a member: exit %d %s", code, errOut)
	}
	if u := s.okJSON(t, wsAdmin, "team-b", "skills", "update", "lint"); u["catalog_version"] != 2.0 {
		t.Errorf("skills update: %v", u)
	}
	// An install edited here is updated only with --reset, and the
	// refusal says so in the CLI's words.
	writeFiles(t, lint, map[string]string{"SKILL.md": skillText("lint", "Lint code, ours.")})
	s.ok(t, member, "team-b", "skills", "edit", "lint", lint)
	writeFiles(t, lint, map[string]string{"SKILL.md": skillText("lint", "Lint code, v3.")})
	s.ok(t, admin, "team-b", "catalog", "publish", "acme", lint)
	if code, _, errOut := s.cli(t, wsAdmin, "team-b", "skills", "update", "lint"); code != exitFailure || !strings.Contains(errOut, "--reset") {
		t.Errorf("update of an edited install: exit %d %s", code, errOut)
	}

	// agents: every context setting is a flag; get names the skills;
	// update changes only what its flags name.
	ag := s.okJSON(t, member, "team-b", "agents", "create", "reviewer", "--instruction", "Review.", "--item", "acme/lint", "--skill", id+"@1",
		"--context-window", "64000", "--placement", "context", "--max-loaded", "2", "--entry-share", "0.2", "--skills-share", "0.5", "--compaction", "off")
	want := map[string]any{"window": 64000.0, "placement": "context", "max_loaded": 2.0, "entry_share": 0.2, "skills_share": 0.5, "compaction": false}
	if len(ag["skills"].([]any)) != 2 || !reflect.DeepEqual(ag["config"].(map[string]any)["context"], want) {
		t.Errorf("agents create: %v", ag)
	}
	if out := s.ok(t, viewer, "team-b", "agents", "get", "reviewer"); !strings.Contains(out, "skill        lint (current version, ") ||
		!strings.Contains(out, "skill        pdf-tools (version 1, "+id+")") || !strings.Contains(out, "context      window 64000, placement context") ||
		!strings.Contains(out, "catalog      whole at 32k, 64k (this agent's window), 128k, 200k, 1M") {
		t.Errorf("agents get does not name the skills or the catalog's fit:\n%s", out)
	}
	u := s.okJSON(t, member, "team-b", "agents", "update", "reviewer", "--model", "m2", "--max-messages", "10")
	want["max_messages"] = 10.0
	if cfg := u["config"].(map[string]any); cfg["model"] != "m2" || cfg["instruction"] != "Review." || !reflect.DeepEqual(cfg["context"], want) {
		t.Errorf("agents update: %v", u)
	}
	if code, _, errOut := s.cli(t, member, "team-b", "agents", "create", "odd", "--entry-share", "2"); code != exitUsage || !strings.Contains(errOut, "--entry-share 2") {
		t.Errorf("a share over 1: exit %d %s", code, errOut)
	}
	if out := s.ok(t, viewer, "team-b", "agents", "list"); !strings.Contains(out, "reviewer") {
		t.Errorf("agents list: %s", out)
	}
	s.ok(t, member, "team-b", "agents", "delete", "reviewer")

	// import from the fake GitHub.
	code, out, errOut = s.cli(t, member, "team-b", "skills", "import", "https://github.com/o/r/tree/main/skills/x-skill")
	if code != exitOK || !strings.Contains(errOut, "importing github.com/o/r") || !strings.Contains(out, "x-skill") {
		t.Errorf("skills import: exit %d\n%s%s", code, out, errOut)
	}

	// policy: deny acme, a new install is refused naming the rule.
	writeFiles(t, lint, map[string]string{"SKILL.md": skillText("fmt", "Format.")})
	os.Rename(lint, filepath.Join(dir, "fmt"))
	s.ok(t, admin, "team-b", "catalog", "publish", "acme", filepath.Join(dir, "fmt"))
	s.ok(t, wsAdmin, "team-b", "policy", "set", `{"install_rules":[{"effect":"deny","registry":"acme"}]}`)
	if out := s.ok(t, viewer, "team-b", "policy", "get"); !strings.Contains(out, "deny") || !strings.Contains(out, "registry acme") {
		t.Errorf("policy get: %s", out)
	}
	code, _, errOut = s.cli(t, member, "team-b", "skills", "install", "acme/fmt")
	if code != exitFailure || !strings.HasPrefix(errOut, "skilld: forbidden: install policy rule 1") {
		t.Errorf("denied install: exit %d %s", code, errOut)
	}

	// errors: exit 1 with the code, exit 2 for usage.
	if code, _, errOut := s.cli(t, viewer, "team-b", "skills", "delete", id); code != exitFailure || !strings.HasPrefix(errOut, "skilld: forbidden: ") {
		t.Errorf("viewer delete: exit %d %s", code, errOut)
	}
	if code, _, errOut := s.cli(t, member, "team-b", "skills", "get", "nope"); code != exitFailure || !strings.HasPrefix(errOut, "skilld: not_found: ") {
		t.Errorf("get a missing skill: exit %d %s", code, errOut)
	}
	if code, _, errOut := s.cli(t, member, "default", "skills", "list"); code != exitFailure || !strings.Contains(errOut, "not_found") {
		t.Errorf("another workspace: exit %d %s", code, errOut)
	}
	code, _, errOut = s.cli(t, member, "team-b", "skills", "create", filepath.Join(dir, "missing"))
	if code != exitFailure || !strings.HasPrefix(errOut, "skilld: ") {
		t.Errorf("create from a missing folder: exit %d %s", code, errOut)
	}
	invalid := filepath.Join(dir, "invalid")
	writeFiles(t, invalid, map[string]string{"SKILL.md": "no frontmatter\n"})
	code, _, errOut = s.cli(t, member, "team-b", "skills", "create", invalid)
	if code != exitFailure || !strings.HasPrefix(errOut, "skilld: invalid: ") {
		t.Errorf("invalid skill: exit %d %s", code, errOut)
	}
	s.ok(t, member, "team-b", "skills", "delete", id)
	for _, tok := range s.okJSON(t, wsAdmin, "team-b", "tokens", "list")["items"].([]any) {
		if tok := tok.(map[string]any); tok["name"] == "ro" {
			s.ok(t, wsAdmin, "team-b", "tokens", "revoke", tok["id"].(string))
		}
	}
	if code, _, errOut := s.cli(t, viewer, "team-b", "skills", "list"); code != exitFailure || !strings.HasPrefix(errOut, "skilld: unauthorized: ") {
		t.Errorf("revoked token: exit %d %s", code, errOut)
	}
}

// TestClientUsage: usage errors exit 2 without calling a server.
func TestClientUsage(t *testing.T) {
	t.Setenv("SKILLD_TOKEN", "")
	for _, args := range [][]string{
		{"skills"},
		{"skills", "frobnicate"},
		{"skills", "get", "--token", "x"},
		{"skills", "get", "a", "b", "--token", "x"},
		{"skills", "list"}, // no token
		{"skills", "restore", "id", "one", "--token", "x"},
		{"tokens", "create", "n", "--token", "x"},
		{"policy", "set", "{bad", "--token", "x"},
		{"agents", "create", "a", "--item", "r/n@x", "--token", "x"},
	} {
		if code, _, _ := runCLI(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, out, _ := runCLI(t, "skills", "help"); code != exitOK || !strings.Contains(out, "upload") {
		t.Errorf("skills help: exit %d %s", code, out)
	}
	code, _, errOut := runCLI(t, "skills", "list", "--server", "http://127.0.0.1:1", "--token", "x")
	if code != exitFailure || !strings.HasPrefix(errOut, "skilld: unavailable: cannot reach") {
		t.Errorf("unreachable server: exit %d %s", code, errOut)
	}
}

// TestClientDefaultWorkspace: without --workspace or SKILLD_WORKSPACE a
// token acts in its own workspace, which GET /v1/token names; a workspace
// given explicitly is still used as given.
func TestClientDefaultWorkspace(t *testing.T) {
	t.Setenv("SKILLD_WORKSPACE", "")
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	s.ok(t, s.admin, "default", "workspaces", "create", "team-c")
	member := strings.TrimSpace(s.ok(t, s.admin, "team-c", "tokens", "create", "ci", "--role", "member"))
	mine := func(args ...string) (int, string, string) {
		return runCLI(t, append(args, "--server", s.url, "--token", member)...)
	}
	dir := filepath.Join(t.TempDir(), "notes")
	writeFiles(t, dir, map[string]string{"SKILL.md": skillText("notes", "Take notes.")})
	if code, out, errOut := mine("skills", "create", dir); code != exitOK || !strings.Contains(out, "notes") {
		t.Fatalf("skills create in the token's workspace: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := mine("skills", "list"); code != exitOK || !strings.Contains(out, "notes") {
		t.Errorf("skills list: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := mine("tokens", "self"); code != exitOK || !strings.Contains(out, "role       member") || !strings.Contains(out, "workspace  team-c (") {
		t.Errorf("tokens self: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := mine("skills", "list", "--workspace", "default"); code != exitFailure || !strings.HasPrefix(errOut, "skilld: not_found: ") {
		t.Errorf("another workspace, given: exit %d %s", code, errOut)
	}
}
