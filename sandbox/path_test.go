package sandbox_test

import (
	"path"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
)

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"a.txt":                "a.txt",
		"./a.txt":              "a.txt",
		"a//b/./c":             "a/b/c",
		"a/../b":               "b",
		".":                    ".",
		"/workspace":           ".",
		"/workspace/":          ".",
		"/workspace/x/y":       "x/y",
		"/workspace//x/../y":   "y",
		"skills/x-1/SKILL.md":  "skills/x-1/SKILL.md",
		"dir/":                 "dir",
		"/workspace/skills/..": ".",
	} {
		got, err := sandbox.CleanPath(in)
		if err != nil || got != want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "..", "../x", "a/../../x", "/", "/etc/passwd", "/workspace/../etc", "/workspacex/a", "a\\b", "a\x00b", "/workspace/.."} {
		got, err := sandbox.CleanPath(in)
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), "path") {
			t.Errorf("CleanPath(%q) = %q, %v; want an invalid-path error", in, got, err)
		}
	}
}

// Whatever the input, a clean path is relative, canonical and inside.
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"a", "/workspace/a", "../a", "a/../../b", "/workspace/../x", "skills/x/../../..", "./././", "a\\b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := sandbox.CleanPath(in)
		if err != nil {
			if skilld.ErrorCode(err) != skilld.EINVALID {
				t.Fatalf("CleanPath(%q): untyped error %v", in, err)
			}
			return
		}
		if got == "" || path.IsAbs(got) || got != path.Clean(got) || got == ".." || strings.HasPrefix(got, "../") || strings.ContainsAny(got, "\\\x00") {
			t.Fatalf("CleanPath(%q) = %q", in, got)
		}
		if again, err := sandbox.CleanPath(got); err != nil || again != got {
			t.Fatalf("CleanPath(CleanPath(%q)) = %q, %v", in, again, err)
		}
	})
}

func TestCheckSkillDir(t *testing.T) {
	if name, err := sandbox.CheckSkillDir("skills/deploy-api-1a2b3c4d"); err != nil || name != "deploy-api-1a2b3c4d" {
		t.Errorf("valid dir: %q, %v", name, err)
	}
	for _, bad := range []string{"", "skills", "skills/", "skills/a/b", "skills/.", "skills/..", "x/y", "/skills/x", "skills/a\\b"} {
		if _, err := sandbox.CheckSkillDir(bad); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("CheckSkillDir(%q): %v", bad, err)
		}
	}
}

func TestLimits(t *testing.T) {
	l := sandbox.Limits{Timeout: time.Hour}.WithDefaults()
	if l.Timeout != sandbox.MaxTimeout || l.Memory != sandbox.DefaultMemory || l.Processes != sandbox.DefaultProcesses || l.Output != sandbox.DefaultOutput || l.CPU != sandbox.DefaultCPU {
		t.Errorf("WithDefaults = %+v", l)
	}
	r := &sandbox.Result{Limit: sandbox.LimitMemory, Limits: l, Truncated: true}
	if s := r.Summary(); !strings.Contains(s, "memory limit of 512 MiB") || !strings.Contains(s, "output cut at 1048576 bytes") || !strings.Contains(s, "killed") {
		t.Errorf("Summary = %q", s)
	}
}
