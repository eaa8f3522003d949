package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/secretkey"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// TestPermissionsAndSecretsCommands: skills permissions and approve show
// the state before and after; secrets set reads the value from stdin,
// list shows the name and never the value, delete removes it.
func TestPermissionsAndSecretsCommands(t *testing.T) {
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := secretkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(storetest.Drivers(t)[0].Open(t), blobs, nil, service.Config{Secrets: &secretkey.Keyring{Current: key}})
	admin, err := svc.Bootstrap(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&httpapi.Server{Service: svc, Version: "test", Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(srv.Close)
	s := &apiServer{url: srv.URL, admin: admin}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"fetch/SKILL.md": skillText("fetch", "Fetches things."), "fetch/skilld.yaml": "network: [api.example.com]\nsecrets: [API_TOKEN]\n"})
	s.ok(t, admin, "default", "skills", "upload", dir+"/fetch")
	p := s.okJSON(t, admin, "default", "skills", "permissions", "fetch")
	if p["state"] != "approval_needed" || p["approved"] != nil || !strings.HasPrefix(p["digest"].(string), "sha256:") {
		t.Errorf("permissions: %v", p)
	}
	if out := s.ok(t, admin, "default", "skills", "permissions", "fetch"); !strings.Contains(out, "approval_needed") || !strings.Contains(out, "api.example.com") {
		t.Errorf("permissions table:\n%s", out)
	}
	if a := s.okJSON(t, admin, "default", "skills", "approve", "fetch", "--digest", p["digest"].(string)); a["state"] != "approved" {
		t.Errorf("approve: %v", a)
	}

	const value = "value-from-stdin"
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"secrets", "set", "API_TOKEN", "--server", s.url, "--token", admin, "--workspace", "default"},
		&env{stdin: strings.NewReader(value + "\n"), stdout: &stdout, stderr: &stderr})
	if code != exitOK {
		t.Fatalf("secrets set: %d %s", code, stderr.String())
	}
	out := s.ok(t, admin, "default", "secrets", "list", "--json")
	var l struct{ Items []struct{ Name string } }
	if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Items) != 1 || l.Items[0].Name != "API_TOKEN" || strings.Contains(out, value) {
		t.Errorf("secrets list: %s (%v)", out, err)
	}
	wsID := s.okJSON(t, admin, "default", "skills", "get", "fetch")["workspace_id"].(string)
	if got, err := svc.SecretValue(t.Context(), wsID, "API_TOKEN"); err != nil || string(got) != value {
		t.Errorf("stored value %q, %v", got, err)
	}
	s.ok(t, admin, "default", "secrets", "delete", "API_TOKEN")
	if code, _, _ := s.cli(t, admin, "default", "secrets", "delete", "API_TOKEN"); code == exitOK {
		t.Error("deleting a missing secret succeeded")
	}
}
