package agent

import (
	"encoding/json"
	"strings"
)

// allowedTool is one entry of a skill's allowed-tools, mapped onto
// skilld's tools: while the skill is active, a call it matches skips
// require_approval (a deny rule still wins).
type allowedTool struct {
	entry string // as the skill wrote it
	tool  string
	// prefix, for shell, is the command's first words ("git"); exact
	// is a whole command; both empty: any command.
	prefix, exact string
}

// claudeTools maps the tool names skills are written with (Claude Code's)
// onto skilld's.
var claudeTools = map[string][]string{
	"Bash":      {ToolShell},
	"Read":      {ToolReadFile, ToolListFiles},
	"Write":     {ToolWriteFile},
	"Edit":      {ToolWriteFile},
	"MultiEdit": {ToolWriteFile},
	"Glob":      {ToolListFiles},
	"LS":        {ToolListFiles},
}

// parseAllowedTools maps entries ("Bash(git:*)", "Read", "shell") onto
// skilld's tools; entries it cannot map are returned as ignored.
// offered reports which tool names exist in the run.
func parseAllowedTools(entries []string, offered func(string) bool) (out []allowedTool, ignored []string) {
	for _, raw := range entries {
		for _, e := range splitEntries(raw) {
			name, arg, hasArg := strings.Cut(e, "(")
			arg = strings.TrimSuffix(arg, ")")
			tools := claudeTools[name]
			if tools == nil && offered(name) {
				tools = []string{name}
			}
			if tools == nil || hasArg && !strings.HasSuffix(e, ")") {
				ignored = append(ignored, e)
				continue
			}
			for _, t := range tools {
				a := allowedTool{entry: e, tool: t}
				if t == ToolShell && hasArg && arg != "*" && arg != "" {
					if p, ok := strings.CutSuffix(arg, ":*"); ok {
						a.prefix = p
					} else {
						a.exact = arg
					}
				}
				out = append(out, a)
			}
		}
	}
	return out, ignored
}

// splitEntries splits an allowed-tools value at spaces and commas outside
// parentheses: "Bash(npm run test), Read" is two entries.
func splitEntries(s string) []string {
	var out []string
	depth, start := 0, -1
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case (r == ' ' || r == ',' || r == '\t' || r == '\n') && depth == 0:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// shellMeta are the characters that let one command line run several
// commands or redirect them: a pre-approved "git" must not also approve
// "git status; rm -rf ~".
const shellMeta = ";&|`$<>()\n\\"

// matches reports whether a call of tool with args is pre-approved by a.
func (a allowedTool) matches(tool string, args json.RawMessage) bool {
	if tool != a.tool {
		return false
	}
	if tool != ToolShell || a.prefix == "" && a.exact == "" {
		return true
	}
	var p struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &p) != nil || strings.ContainsAny(p.Command, shellMeta) {
		return false
	}
	cmd := strings.Join(strings.Fields(p.Command), " ")
	if a.exact != "" {
		return cmd == strings.Join(strings.Fields(a.exact), " ")
	}
	return cmd == a.prefix || strings.HasPrefix(cmd, a.prefix+" ")
}
