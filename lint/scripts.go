package lint

import (
	"fmt"
	"path"
	"strings"
)

// scriptExtensions are the file types under scripts/ that a shell runs
// through their #! line; others there (data, Windows batch files) are left
// alone unless they start with "#!" anyway.
func isScriptExtension(ext string) bool {
	switch strings.ToLower(ext) {
	case "", ".sh", ".bash", ".zsh", ".fish", ".py", ".rb", ".pl", ".js", ".mjs", ".cjs", ".ts", ".php", ".lua", ".r", ".tcl":
		return true
	}
	return false
}

// interpreters are the commands that run a script named after them, so
// that the script needs neither a #! line nor the executable bit.
func isInterpreter(cmd string) bool {
	switch path.Base(cmd) {
	case "python", "python3", "python2", "py", "pypy3", "bash", "sh", "zsh", "dash", "fish", "source", ".",
		"node", "deno", "bun", "tsx", "ts-node", "ruby", "perl", "php", "Rscript", "lua", "tclsh":
		return true
	}
	return false
}

// scripts returns the scripts a model is told to run: files under
// scripts/ of a scripting language or starting with "#!" that SKILL.md,
// or a file it leads to, names by path. Modules other scripts import are
// run by those, and left out.
func (s *skill) scripts() []string {
	var out []string
	for _, e := range s.pkg.Entries() {
		if !strings.HasPrefix(e.Path, "scripts/") || !s.refs.named[e.Path] || s.refs.imported[e.Path] {
			continue
		}
		f, _ := s.pkg.File(e.Path)
		if isScriptExtension(path.Ext(e.Path)) || hasShebang(f.Data) {
			out = append(out, e.Path)
		}
	}
	return out
}

func hasShebang(data []byte) bool { return strings.HasPrefix(string(data[:min(len(data), 2)]), "#!") }

// runByInterpreter reports whether SKILL.md, or a file it leads to, runs
// the script p through an interpreter ("python3 scripts/fill.py",
// "uv run scripts/x.py", "bash -e ./scripts/run.sh").
func (s *skill) runByInterpreter(p string) bool {
	for _, from := range s.refs.order {
		text := s.refs.texts[from]
		for _, written := range writtenAs(p, path.Dir(from)) {
			for at := find(text, written, 0, tokenAt); at >= 0; at = find(text, written, at+len(written), tokenAt) {
				lineStart := strings.LastIndexByte(text[:at], '\n') + 1
				if commandBefore(text[lineStart:at]) {
					return true
				}
			}
		}
	}
	return false
}

// commandBefore reports whether the text before a script's path on its
// line ends with an interpreter, flags and a folder prefix aside.
func commandBefore(before string) bool {
	// The path may be written under a prefix ("./", "$SKILL_DIR/").
	if i := strings.LastIndexAny(before, " \t`'\"("); i >= 0 {
		before = before[:i+1]
	} else {
		before = ""
	}
	var words []string
	for _, w := range strings.Fields(before) {
		if w = strings.Trim(w, "`'\"($"); w != "" {
			words = append(words, w)
		}
	}
	for len(words) > 0 && strings.HasPrefix(words[len(words)-1], "-") {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if last == "run" && len(words) > 1 {
		// uv run, deno run, bun run, poetry run, pipenv run
		switch words[len(words)-2] {
		case "uv", "deno", "bun", "poetry", "pipenv", "pdm", "hatch":
			return true
		}
	}
	return isInterpreter(last)
}

// interpreterFor names the usual interpreter of a script, for messages.
func interpreterFor(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".py":
		return "python3"
	case ".js", ".mjs", ".cjs":
		return "node"
	case ".ts":
		return "tsx"
	case ".rb":
		return "ruby"
	case ".pl":
		return "perl"
	case ".php":
		return "php"
	case ".lua":
		return "lua"
	case ".r":
		return "Rscript"
	case ".zsh":
		return "zsh"
	case ".fish":
		return "fish"
	case ".tcl":
		return "tclsh"
	case ".bash":
		return "bash"
	}
	return "sh"
}

func checkScriptShebang(s *skill) []Finding {
	var out []Finding
	for _, p := range s.scripts() {
		f, _ := s.pkg.File(p)
		if hasShebang(f.Data) || s.runByInterpreter(p) {
			continue
		}
		cmd := interpreterFor(p)
		out = append(out, Finding{File: p, Line: 1, Message: fmt.Sprintf(
			"%s has no #! line, and %s never says which interpreter runs it: start it with one (#!/usr/bin/env %s), or write the command (%s %s) in %s",
			p, s.file, cmd, cmd, p, s.file)})
	}
	return out
}

func checkScriptExecutable(s *skill) []Finding {
	var out []Finding
	for _, p := range s.scripts() {
		f, _ := s.pkg.File(p)
		if f.Exec || s.runByInterpreter(p) {
			continue
		}
		out = append(out, Finding{File: p, Message: fmt.Sprintf(
			"%s is not executable, and %s never says which interpreter runs it: chmod +x it (and keep the bit in archives), or write the command that runs it in %s",
			p, s.file, s.file)})
	}
	return out
}
