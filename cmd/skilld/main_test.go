package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/internal/testbin"
)

// runCLI runs the command in-process and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &env{stdout: &stdout, stderr: &stderr})
	return code, stdout.String(), stderr.String()
}

const examples = "../../examples/skills"

// writeFiles creates files (path → content) under dir; paths ending in .sh
// are made executable.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// zipBytes builds a zip archive of files.
func zipBytes(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for p, c := range files {
		w, err := zw.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(c))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decodeValidations(t *testing.T, out string) []validation {
	t.Helper()
	var v []validation
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("output is not a JSON array of results: %v\n%s", err, out)
	}
	return v
}

func TestValidateExamples(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "validate", "--json", examples)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s, stdout %s", code, errOut, out)
	}
	results := decodeValidations(t, out)
	if len(results) < 3 {
		t.Fatalf("want at least 3 example skills, got %d", len(results))
	}
	for _, r := range results {
		if !r.Valid || r.Name != filepath.Base(r.Path) || !strings.HasPrefix(r.Digest, "sha256:") || len(r.Digest) != 71 {
			t.Errorf("example %+v", r)
		}
	}
}

func TestValidateVerdicts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"good/SKILL.md":       "---\nname: good\ndescription: fine\n---\nBody\n",
		"bad-name/SKILL.md":   "---\nname: Bad\ndescription: d\n---\n",
		"extra-key/SKILL.md":  "---\nname: extra-key\ndescription: d\nversion: 2\n---\n",
		"no-skill/readme.txt": "nothing here",
	})
	code, out, _ := runCLI(t, "validate", filepath.Join(root, "good"))
	if code != exitOK || !strings.Contains(out, "1 skill checked: 1 valid, 0 invalid") {
		t.Errorf("good: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "validate", "--json", root)
	if code != exitFailure {
		t.Errorf("folder with an invalid skill: exit %d, want %d", code, exitFailure)
	}
	byName := map[string]validation{}
	for _, r := range decodeValidations(t, out) {
		byName[filepath.Base(r.Path)] = r
	}
	if r := byName["bad-name"]; r.Valid || len(r.Errors) != 2 || !strings.Contains(r.Errors[0].Message, "lowercase") || !strings.Contains(r.Errors[1].Message, "must match") {
		t.Errorf("bad-name: %+v", r)
	}
	if r := byName["extra-key"]; r.Valid || !strings.Contains(r.Errors[0].Message, "Unexpected fields") {
		t.Errorf("extra-key strict: %+v", r)
	}
	if _, found := byName["no-skill"]; found {
		t.Error("a folder without SKILL.md must not be reported as a skill")
	}
	code, out, _ = runCLI(t, "validate", "--json", "--lenient", filepath.Join(root, "extra-key"))
	if r := decodeValidations(t, out); code != exitOK || !r[0].Valid || len(r[0].Warnings) != 1 {
		t.Errorf("extra-key lenient: exit %d %+v", code, r)
	}
	code, out, _ = runCLI(t, "validate", filepath.Join(root, "no-skill"))
	if code != exitFailure || !strings.Contains(out, "no skills found") {
		t.Errorf("a folder without skills: exit %d\n%s", code, out)
	}
	code, _, errOut := runCLI(t, "validate", filepath.Join(root, "missing"))
	if code != exitUsage || !strings.Contains(errOut, filepath.Join(root, "missing")+" does not exist") {
		t.Errorf("a missing path: exit %d\n%s", code, errOut)
	}
	code, out, _ = runCLI(t, "validate", filepath.Join(root, "good", "SKILL.md"), "--json")
	if r := decodeValidations(t, out); code != exitOK || r[0].Name != "good" {
		t.Errorf("SKILL.md path: exit %d %+v", code, r)
	}
}

func TestValidateArchive(t *testing.T) {
	t.Parallel()
	archive := filepath.Join(t.TempDir(), "whatever-name.skill")
	zipped := zipBytes(t, map[string]string{
		"zipped/SKILL.md":        "---\nname: zipped\ndescription: from a zip\n---\n",
		"zipped/scripts/go.sh":   "#!/bin/sh\necho hi\n",
		"__MACOSX/zipped/._junk": "resource fork",
	})
	if err := os.WriteFile(archive, zipped, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "validate", "--json", archive)
	if r := decodeValidations(t, out); code != exitOK || r[0].Name != "zipped" || !r[0].Valid {
		t.Errorf("zip: exit %d %+v", code, r)
	}
	if err := os.WriteFile(archive, []byte("not an archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "validate", "--json", archive)
	if r := decodeValidations(t, out); code != exitFailure || r[0].Errors[0].Field != "package" {
		t.Errorf("garbage archive: exit %d %+v", code, r)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"validate"},
		{"validate", "--no-such-flag", examples},
		{"pack"},
		{"pack", "a", "b"},
		{"version", "extra"},
	} {
		if code, _, _ := runCLI(t, args...); code != exitUsage {
			t.Errorf("skilld %q: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, out, _ := runCLI(t, "help"); code != exitOK || !strings.Contains(out, "validate") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "validate", "-h"); code != exitOK || !strings.Contains(errOut, "--lenient") && !strings.Contains(errOut, "-lenient") {
		t.Errorf("validate -h: exit %d\n%s", code, errOut)
	}
}

func TestPack(t *testing.T) {
	t.Parallel()
	skill := filepath.Join(examples, "csv-inspector")
	code, out, errOut := runCLI(t, "pack", skill)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "sha256:") || len(lines) != 3 || !strings.HasPrefix(lines[2], "100755 ") {
		t.Errorf("pack output:\n%s", out)
	}
	code, out, _ = runCLI(t, "pack", "--json", skill)
	var got struct {
		Digest string
		Files  []struct {
			Path string
			Exec bool
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if got.Digest != lines[0] || len(got.Files) != 2 || got.Files[1].Path != "scripts/csv-summary.sh" || !got.Files[1].Exec {
		t.Errorf("pack --json: %+v", got)
	}
	if code, _, errOut := runCLI(t, "pack", examples); code != exitFailure || !strings.Contains(errOut, "name one of them") {
		t.Errorf("pack of a folder of skills: exit %d %s", code, errOut)
	}
}

// TestBinary builds the real binary and checks its exit codes as a shell
// script would see them.
func TestBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short mode")
	}
	bin := testbin.Skilld(t)
	bad := t.TempDir()
	writeFiles(t, bad, map[string]string{"x/SKILL.md": "no frontmatter"})
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"validate", examples}, 0, "valid, 0 invalid"},
		{[]string{"validate", filepath.Join(bad, "x")}, 1, "must start with YAML frontmatter"},
		{[]string{"validate"}, 2, ""},
		{[]string{"version"}, 0, "skilld "},
	} {
		cmd := exec.Command(bin, tc.args...)
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != tc.code || !strings.Contains(string(out), tc.out) {
			t.Errorf("skilld %q: exit %d, want %d; output:\n%s", tc.args, cmd.ProcessState.ExitCode(), tc.code, out)
		}
	}
}
