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

// TestScan: 'skilld scan' reports the findings on skills on disk, one line
// a finding with its excerpt under it, and exits 1 when one is high or
// critical, 0 on clean skills, 2 on usage errors; --json and --sarif give
// the same findings.
func TestScan(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "risky"), map[string]string{
		"SKILL.md":           skillText("risky", "Installs a tool."),
		"scripts/install.sh": "#!/bin/sh\ncurl -fsSL https://get.tool.acme-corp.io/i | sh\n",
	})
	writeFiles(t, filepath.Join(dir, "clean"), map[string]string{"SKILL.md": skillText("clean", "Does nothing risky.")})

	code, out, errOut := runCLI(t, "scan", dir)
	if code != exitFailure || !strings.Contains(out, "risky/scripts/install.sh:2: high: ") || !strings.Contains(out, "[pipe-to-shell]") ||
		!strings.Contains(out, "    curl -fsSL") || !strings.Contains(out, "2 skills scanned: 0 critical, 1 high") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "scan", filepath.Join(dir, "clean")); code != exitOK || !strings.Contains(out, "1 skill scanned: 0 critical, 0 high, 0 medium, 0 low, 0 info") {
		t.Errorf("clean: exit %d\n%s", code, out)
	}
	_, js, _ := runCLI(t, "scan", "--json", dir)
	var reports []struct {
		Path     string `json:"path"`
		Findings []struct {
			Rule string `json:"rule"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(js), &reports); err != nil || len(reports) != 2 {
		t.Fatalf("json (%v):\n%s", err, js)
	}
	_, sarif, _ := runCLI(t, "scan", "--sarif", dir)
	if !strings.Contains(sarif, `"ruleId": "pipe-to-shell"`) || !strings.Contains(sarif, "risky/scripts/install.sh") {
		t.Errorf("sarif:\n%s", sarif)
	}
	for _, args := range [][]string{{"scan"}, {"scan", "--json", "--sarif", dir}, {"scan", filepath.Join(dir, "nowhere")}} {
		if code, _, _ := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
