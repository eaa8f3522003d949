package agent

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/sandbox"
)

// Names of the built-in tools.
const (
	ToolShell          = "shell"
	ToolReadFile       = "read_file"
	ToolWriteFile      = "write_file"
	ToolListFiles      = "list_files"
	ToolReadToolOutput = "read_tool_output"
)

// controlFlow tools are never withheld by policy: without them a run
// cannot read its own outputs.
func controlFlow(name string) bool { return name == ToolReadToolOutput }

// File tool limits.
const (
	// MaxReadFile caps the file read_file opens; larger files are read
	// with offset and limit, or with the shell tool.
	MaxReadFile = 4 << 20
	// DefaultReadLines is how many lines read_file returns by default.
	DefaultReadLines = 2000
	// MaxListEntries caps one list_files answer.
	MaxListEntries = 500
)

type shellParams struct {
	Command  string `json:"command" jsonschema:"the command, run with sh -c in /workspace (the task's folder; activated skills are under skills/)"`
	TimeoutS int    `json:"timeout_s,omitempty" jsonschema:"seconds before the command is killed (default 120, at most 600)"`
}

type readFileParams struct {
	Path   string `json:"path" jsonschema:"path relative to /workspace, or absolute under /workspace"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to return, counting from 1 (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most lines to return (default 2000)"`
}

type writeFileParams struct {
	Path    string `json:"path" jsonschema:"path relative to /workspace, or absolute under /workspace; folders are created"`
	Content string `json:"content" jsonschema:"the whole new content of the file"`
}

type listFilesParams struct {
	Path string `json:"path,omitempty" jsonschema:"folder relative to /workspace (default: /workspace itself)"`
}

type readOutputParams struct {
	ID     string `json:"id" jsonschema:"the id given where the output was cut"`
	Offset int    `json:"offset,omitempty" jsonschema:"first character to return (default 0)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"characters to return (default and maximum 16000)"`
}

// builtinTools returns the run's built-in tools: the sandbox tools when
// there is a sandbox, and read_tool_output always.
func (r *run) builtinTools() ([]*tool.Tool, error) {
	var out []*tool.Tool
	add := func(t *tool.Tool, err error) error {
		if err == nil {
			out = append(out, t)
		}
		return err
	}
	if r.cfg.Sandbox != nil {
		for _, err := range []error{
			add(tool.New(ToolShell, "Run a shell command in /workspace, the task's sandbox, where activated skills' files are (read-only, under skills/), and return its output and exit status.", r.shell)),
			add(tool.New(ToolReadFile, "Read a text file in /workspace, by lines: offset is the first line (from 1), limit how many.", r.readFile)),
			add(tool.New(ToolWriteFile, "Write a text file in /workspace, replacing it if it exists. Files under skills/ cannot be written.", r.writeFile)),
			add(tool.New(ToolListFiles, "List a folder of /workspace and what is below it.", r.listFiles)),
		} {
			if err != nil {
				return nil, err
			}
		}
	}
	if err := add(tool.New(ToolReadToolOutput, "Read a page of a long tool output that was cut, by its id.", r.readOutput)); err != nil {
		return nil, err
	}
	// Reads, and writes of given content, may run again after a restart;
	// a shell command may not (it could append, send, delete).
	for _, t := range out {
		t.Idempotent = t.Name != ToolShell
	}
	return out, nil
}

func (r *run) shell(ctx context.Context, p shellParams) (string, error) {
	var lim sandbox.Limits
	if p.TimeoutS > 0 {
		lim.Timeout = min(time.Duration(p.TimeoutS)*time.Second, sandbox.MaxTimeout)
	}
	allow, env, granted := r.commandGrants()
	if granted != nil {
		granted.CallRef = callOf(ctx)
		r.emit(ctx, *granted)
	}
	res, err := r.cfg.Sandbox.Exec(ctx, sandbox.ExecParams{Command: p.Command, Limits: lim, Env: env, Allow: allow})
	if err != nil {
		return "", err
	}
	for _, e := range res.Egress {
		r.emit(ctx, egressOf(e))
	}
	reportExit(ctx, res.ExitCode)
	out := string(res.Output)
	if !utf8.ValidString(out) {
		out = strings.ToValidUTF8(out, "\ufffd")
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + grantNotes(granted) + res.Summary(), nil
}

func (r *run) readFile(ctx context.Context, p readFileParams) (string, error) {
	b, err := r.cfg.Sandbox.ReadFile(ctx, p.Path, MaxReadFile)
	note := ""
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		var actual string
		if actual, err = r.caseMiss(ctx, p.Path, err); actual != "" {
			b, err = r.cfg.Sandbox.ReadFile(ctx, actual, MaxReadFile)
			note = fmt.Sprintf("[no file %s: this is %s]", cleanOr(p.Path), actual)
		}
	}
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", skilld.Errorf(skilld.EINVALID, "%q is not a text file; inspect it with the shell tool (for example: file, od -c | head)", p.Path)
	}
	offset, limit := max(p.Offset, 1), p.Limit
	if limit <= 0 {
		limit = DefaultReadLines
	}
	lines := strings.SplitAfter(string(b), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if offset > len(lines) && !(offset == 1 && len(lines) == 0) {
		return "", skilld.Errorf(skilld.EINVALID, "offset %d is past the end of %q (%d lines)", offset, p.Path, len(lines))
	}
	end := min(offset-1+limit, len(lines))
	text := strings.Join(lines[offset-1:end], "")
	if offset > 1 || end < len(lines) {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		next := ""
		if end < len(lines) {
			next = fmt.Sprintf("; continue with offset %d", end+1)
		}
		text += fmt.Sprintf("[lines %d–%d of %d%s]", offset, end, len(lines), next)
	}
	if note != "" {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += note
	}
	return text, nil
}

func (r *run) writeFile(ctx context.Context, p writeFileParams) (string, error) {
	if err := r.cfg.Sandbox.WriteFile(ctx, p.Path, []byte(p.Content)); err != nil {
		return "", err
	}
	rel, _ := sandbox.CleanPath(p.Path)
	return fmt.Sprintf("wrote %d bytes to %s", len(p.Content), rel), nil
}

// listFiles lists a folder and what is below it, breadth first, up to
// MaxListEntries entries: folders end with "/", files show their size,
// links are shown, not followed.
func (r *run) listFiles(ctx context.Context, p listFilesParams) (string, error) {
	start := p.Path
	if start == "" {
		start = "."
	}
	info, err := r.cfg.Sandbox.Stat(ctx, start)
	if err != nil {
		return "", err
	}
	if !info.Mode.IsDir() {
		return "", skilld.Errorf(skilld.EINVALID, "%q is a file; read it with read_file", p.Path)
	}
	var b strings.Builder
	queue, n := []string{start}, 0
	for len(queue) > 0 && n < MaxListEntries {
		dir := queue[0]
		queue = queue[1:]
		entries, err := r.cfg.Sandbox.List(ctx, dir)
		if err != nil {
			if dir == start {
				return "", err
			}
			fmt.Fprintf(&b, "%s/ (not listed: %s)\n", dir, skilld.ErrorMessage(err))
			continue
		}
		for _, e := range entries {
			if n == MaxListEntries {
				break
			}
			n++
			ro := ""
			if e.ReadOnly {
				ro = ", read-only"
			}
			switch {
			case e.Mode.IsDir() && e.ReadOnly:
				fmt.Fprintf(&b, "%s/ (read-only)\n", e.Path)
				queue = append(queue, e.Path)
			case e.Mode.IsDir():
				fmt.Fprintf(&b, "%s/\n", e.Path)
				queue = append(queue, e.Path)
			case e.Mode&fs.ModeSymlink != 0:
				fmt.Fprintf(&b, "%s (link)\n", e.Path)
			case e.Mode.IsRegular():
				fmt.Fprintf(&b, "%s (%d bytes%s)\n", e.Path, e.Size, ro)
			default:
				fmt.Fprintf(&b, "%s (%s)\n", e.Path, e.Mode.Type())
			}
		}
	}
	if n == 0 {
		return "(empty folder)", nil
	}
	if len(queue) > 0 || n == MaxListEntries {
		fmt.Fprintf(&b, "[listing stopped at %d entries; list a subfolder for more]", MaxListEntries)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func (r *run) readOutput(ctx context.Context, p readOutputParams) (string, error) {
	text, err := r.cfg.Outputs.Get(ctx, p.ID)
	if err != nil {
		return "", err
	}
	runes := []rune(text)
	limit := p.Limit
	if limit <= 0 || limit > MaxReadPage {
		limit = MaxReadPage
	}
	if p.Offset < 0 || p.Offset > len(runes) {
		return "", skilld.Errorf(skilld.EINVALID, "offset %d is outside the output (%d characters)", p.Offset, len(runes))
	}
	end := min(p.Offset+limit, len(runes))
	page := string(runes[p.Offset:end])
	if end < len(runes) {
		page += fmt.Sprintf("\n[characters %d–%d of %d; continue with offset %d]", p.Offset, end, len(runes), end)
	} else {
		page += fmt.Sprintf("\n[characters %d–%d of %d; end of output]", p.Offset, end, len(runes))
	}
	return page, nil
}
