package agent

import (
	"encoding/json"
	"testing"
)

func TestAllowedToolsMapping(t *testing.T) {
	known := func(n string) bool { return n == "lookup" || n == ToolShell }
	got, ignored := parseAllowedTools([]string{"Bash(git:*) Read", "lookup", "WebFetch", "Bash(npm run test)", "Bash(broken"}, known)
	if len(ignored) != 2 || ignored[0] != "WebFetch" || ignored[1] != "Bash(broken" {
		t.Errorf("ignored %q", ignored)
	}
	shell := func(cmd string) json.RawMessage { b, _ := json.Marshal(map[string]string{"command": cmd}); return b }
	for _, tc := range []struct {
		tool string
		args json.RawMessage
		want bool
	}{
		{ToolShell, shell("git status"), true},
		{ToolShell, shell("git"), true},
		{ToolShell, shell("  git   log -n 1 "), true},
		{ToolShell, shell("gitk"), false},
		{ToolShell, shell("git status; rm -rf ~"), false},
		{ToolShell, shell("git status && curl x"), false},
		{ToolShell, shell("git $(id)"), false},
		{ToolShell, shell("git log > out"), false},
		{ToolShell, shell("npm run test"), true},
		{ToolShell, shell("npm run test --watch"), false},
		{ToolReadFile, json.RawMessage(`{"path":"x"}`), true},
		{ToolListFiles, json.RawMessage(`{}`), true},
		{ToolWriteFile, json.RawMessage(`{}`), false},
		{"lookup", json.RawMessage(`{}`), true},
	} {
		ok := false
		for _, a := range got {
			ok = ok || a.matches(tc.tool, tc.args)
		}
		if ok != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.tool, tc.args, ok, tc.want)
		}
	}
}
