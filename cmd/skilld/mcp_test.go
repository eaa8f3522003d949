package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/internal/testbin"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/sqlitestore"
)

// tsClientDir holds the Node script driving the server with the official
// MCP TypeScript SDK; scripts/test installs its node_modules.
const tsClientDir = "../../mcpserver/testdata/tsclient"

// tsReport is what client.mjs prints.
type tsReport struct {
	ServerName     string   `json:"serverName"`
	Extensions     []string `json:"extensions"`
	DirectoryRead  bool     `json:"directoryRead"`
	Tools          []string `json:"tools"`
	Enum           []string `json:"enum"`
	Listed         []string `json:"listed"`
	Activated      string   `json:"activated"`
	ActivatedError bool     `json:"activatedError"`
	File           string   `json:"file"`
	WithheldError  bool     `json:"withheldError"`
	WithheldText   string   `json:"withheldText"`
	Resources      []struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
	} `json:"resources"`
	ResourceText  string `json:"resourceText"`
	ResourceCache struct {
		TTLMs      int    `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	} `json:"resourceCache"`
	SkillsList []struct {
		URI   string `json:"uri"`
		Name  string `json:"name"`
		Files int    `json:"files"`
	} `json:"skillsList"`
	Directories map[string][]struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
	} `json:"directories"`
	Index []struct {
		Name   string `json:"name"`
		URL    string `json:"url"`
		Digest string `json:"digest"`
	} `json:"index"`
}

const mcpLintMD = "---\nname: lint\ndescription: Lints Go code the team's way.\n---\n# Lint\n\nRun scripts/lint.sh, then read references/rules.md.\n"

// TestMCPTypeScriptClient runs the official MCP TypeScript SDK against
// `skilld mcp` (stdio, the built binary) and `skilld serve` (/mcp over
// streamable HTTP), with a viewer token on a workspace whose policy
// withholds one installed skill.
func TestMCPTypeScriptClient(t *testing.T) {
	node := requireTSClient(t)
	data := t.TempDir()
	viewer := seedMCPWorkspace(t, data)
	bin := testbin.Skilld(t)

	t.Run("stdio", func(t *testing.T) {
		cmd := exec.CommandContext(t.Context(), node, "client.mjs", "stdio", bin, "mcp", "--data", data, "--workspace", "default")
		checkTSReport(t, runTSClient(t, cmd, viewer))
	})
	t.Run("http", func(t *testing.T) {
		base, stderr, stop := startServe(t, "--data", data)
		defer func() {
			if code := stop(); code != exitOK {
				t.Errorf("serve exited %d: %s", code, stderr.String())
			}
		}()
		cmd := exec.CommandContext(t.Context(), node, "client.mjs", "http", base+"/mcp")
		checkTSReport(t, runTSClient(t, cmd, viewer))
	})
}

// requireTSClient returns node, skipping when it or the SDK is missing,
// except under CI=true, where that fails.
func requireTSClient(t *testing.T) string {
	t.Helper()
	missing := func(reason string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI=true: scripts/test installs it)", reason)
		}
		t.Skipf("%s; run: npm ci --prefix mcpserver/testdata/tsclient", reason)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing("the MCP TypeScript SDK is not installed in " + tsClientDir)
	}
	return node
}

func runTSClient(t *testing.T, cmd *exec.Cmd, token string) *tsReport {
	t.Helper()
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "SKILLD_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var r tsReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs printed %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	return &r
}

func checkTSReport(t *testing.T, r *tsReport) {
	t.Helper()
	if r.ServerName != "skilld" || !slices.Contains(r.Extensions, "io.modelcontextprotocol/skills") {
		t.Errorf("server %q, extensions %v", r.ServerName, r.Extensions)
	}
	if !slices.Equal(r.Tools, []string{"activate_skill", "list_skills", "read_skill_file"}) {
		t.Errorf("tools %v", r.Tools)
	}
	if !slices.Equal(r.Enum, []string{"commit-message", "lint"}) || !slices.Equal(r.Listed, []string{"commit-message", "lint"}) {
		t.Errorf("enum %v, listed %v: want the disclosed skills only", r.Enum, r.Listed)
	}
	if r.ActivatedError || !strings.HasPrefix(r.Activated, `<skill_content name="lint">`) || !strings.Contains(r.Activated, "- references/rules.md") {
		t.Errorf("activate_skill lint: %s", r.Activated)
	}
	if r.File != "Rule 1: errors are wrapped.\n" {
		t.Errorf("read_skill_file: %q", r.File)
	}
	if !r.WithheldError || !strings.Contains(r.WithheldText, "not_found") {
		t.Errorf("activating the withheld skill: %v %s", r.WithheldError, r.WithheldText)
	}
	if len(r.Resources) != 5 {
		t.Errorf("resources %+v", r.Resources)
	}
	digests := map[string]string{}
	for _, res := range r.Resources {
		digests[res.URI] = res.Digest
		if strings.Contains(res.URI, "risky") || res.URI != "skill://index.json" && !strings.HasPrefix(res.Digest, "sha256:") {
			t.Errorf("resource %+v", res)
		}
	}
	if r.ResourceText != mcpLintMD || r.ResourceCache.TTLMs != 60000 || r.ResourceCache.CacheScope != "private" {
		t.Errorf("resources/read: %q, cache hints %+v", r.ResourceText, r.ResourceCache)
	}
	// commit-message was stored under a name its SKILL.md does not say:
	// the extension's entry says the stored one.
	if len(r.SkillsList) != 2 || r.SkillsList[1].URI != "skill://lint/SKILL.md" || r.SkillsList[1].Name != "lint" || r.SkillsList[1].Files != 3 ||
		r.SkillsList[0].URI != "skill://commit-message/SKILL.md" || r.SkillsList[0].Name != "commit-message" {
		t.Errorf("skills/list %+v", r.SkillsList)
	}
	if !r.DirectoryRead || fmt.Sprint(r.Directories["root"]) != "[{skill://lint/SKILL.md text/markdown} {skill://lint/references inode/directory} {skill://lint/scripts inode/directory}]" ||
		fmt.Sprint(r.Directories["references"]) != "[{skill://lint/references/rules.md text/markdown}]" {
		t.Errorf("directoryRead %v, directories %+v", r.DirectoryRead, r.Directories)
	}
	var indexed []string
	for _, e := range r.Index {
		indexed = append(indexed, e.Name)
		if e.URL != "skill://"+e.Name+"/SKILL.md" || e.Digest != digests[e.URL] {
			t.Errorf("index entry %+v; resources/list says %s", e, digests[e.URL])
		}
	}
	if !slices.Equal(indexed, r.Enum) {
		t.Errorf("index %v, enum %v", indexed, r.Enum)
	}
}

// seedMCPWorkspace prepares the storage of --data data: the default
// workspace with two skills, one installed skill the policy withholds,
// and a viewer token, whose secret it returns.
func seedMCPWorkspace(t *testing.T, data string) string {
	t.Helper()
	ctx := t.Context()
	db, err := sqlitestore.Open(ctx, filepath.Join(data, "skilld.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	blobs, err := fsblob.New(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(db, blobs, nil, service.Config{})
	secret, err := svc.Bootstrap(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := svc.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create("risky/SKILL.md")
	w.Write([]byte("---\nname: risky\ndescription: From outside.\n---\nDo risky things.\n"))
	zw.Close()
	steps := []func() error{
		func() error {
			_, err := svc.CreateSkill(ctx, admin, service.CreateSkillParams{Files: map[string]string{"SKILL.md": mcpLintMD,
				"scripts/lint.sh": "#!/bin/sh\ngo vet ./...\n", "references/rules.md": "Rule 1: errors are wrapped.\n"}})
			return err
		},
		func() error {
			_, err := svc.CreateSkill(ctx, admin, service.CreateSkillParams{Files: map[string]string{
				"SKILL.md": "---\nname: commit-msg\ndescription: Writes commit messages.\n---\nUse the imperative mood.\n"},
				SkillOptions: service.SkillOptions{Name: "commit-message"}})
			return err
		},
		func() error {
			_, err := svc.CreateRegistry(ctx, admin, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity})
			return err
		},
		func() error {
			_, err := svc.PublishCatalogItem(ctx, admin, service.PublishCatalogItemParams{Registry: "acme", Archive: zbuf.Bytes()})
			return err
		},
		func() error {
			_, err := svc.InstallSkill(ctx, admin, service.InstallSkillParams{Item: "acme/risky"})
			return err
		},
		func() error {
			_, err := svc.PutPolicy(ctx, admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, Registry: "acme"}}})
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := svc.CreateToken(ctx, admin, service.CreateTokenParams{Name: "mcp-viewer", Role: skilld.RoleViewer})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Secret
}

// TestMCPCommandUsage: the command refuses to start without a token and
// says how to give one.
func TestMCPCommandUsage(t *testing.T) {
	t.Setenv("SKILLD_TOKEN", "")
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"mcp", "--data", migratedDataDir(t)}, &env{stdout: &bytes.Buffer{}, stderr: &stderr})
	if code != exitUsage || !strings.Contains(stderr.String(), "no token: pass --token or set SKILLD_TOKEN") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	code = run(t.Context(), []string{"mcp", "--data", migratedDataDir(t), "--token", "skd_wrong"}, &env{stdout: &bytes.Buffer{}, stderr: &stderr})
	if code != exitFailure || !strings.Contains(stderr.String(), "invalid, expired or revoked token") {
		t.Errorf("bad token: exit %d: %s", code, stderr.String())
	}
}
