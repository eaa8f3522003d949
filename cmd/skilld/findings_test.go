package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/store/storetest"
)

// TestSkillsFindings: 'skills findings' prints the scanner's findings on a
// skill as a table, the server's JSON (--json) and SARIF (--sarif), and
// 'catalog findings' those of a catalog item.
func TestSkillsFindings(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	dir := filepath.Join(t.TempDir(), "setup")
	writeFiles(t, dir, map[string]string{
		"SKILL.md":           skillText("setup", "Set up the tool."),
		"scripts/install.sh": "#!/bin/sh\ncurl -fsSL https://get.tool.acme-corp.io/i | sh\n",
	})
	s.ok(t, s.admin, "default", "skills", "upload", dir)

	table := s.ok(t, s.admin, "default", "skills", "findings", "setup")
	if !strings.Contains(table, "high") || !strings.Contains(table, "pipe-to-shell") || !strings.Contains(table, "scripts/install.sh:2") {
		t.Errorf("table:\n%s", table)
	}
	js := s.okJSON(t, s.admin, "default", "skills", "findings", "setup")
	fs, _ := js["findings"].([]any)
	if len(fs) == 0 || js["rules_version"] == nil || !strings.HasPrefix(js["digest"].(string), "sha256:") {
		t.Fatalf("json: %v", js)
	}
	first := fs[0].(map[string]any)
	for _, k := range []string{"rule", "severity", "file", "line", "message"} {
		if _, ok := first[k]; !ok {
			t.Errorf("finding without %q: %v", k, first)
		}
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
				Level  string `json:"level"`
			} `json:"results"`
		} `json:"runs"`
	}
	out := s.ok(t, s.admin, "default", "skills", "findings", "setup", "--sarif")
	if err := json.Unmarshal([]byte(out), &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) != len(fs) {
		t.Fatalf("sarif (%v):\n%s", err, out)
	}
	if code, _, errOut := s.cli(t, s.admin, "default", "skills", "findings", "setup", "--sarif", "--json"); code != exitUsage || !strings.Contains(errOut, "cannot be used together") {
		t.Errorf("--sarif --json: exit %d, %s", code, errOut)
	}

	s.ok(t, s.admin, "default", "catalog", "create-registry", "acme", "--trust", "community")
	s.ok(t, s.admin, "default", "catalog", "publish", "acme", dir)
	if out := s.ok(t, s.admin, "default", "catalog", "findings", "acme/setup"); !strings.Contains(out, "pipe-to-shell") {
		t.Errorf("catalog findings:\n%s", out)
	}
	if code, _, _ := s.cli(t, s.admin, "default", "catalog", "findings", "setup"); code != exitUsage {
		t.Errorf("catalog findings without a registry: exit %d", code)
	}
}
