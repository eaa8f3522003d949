package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
)

// Names of the built-in tools.
const (
	ToolShell          = "shell"
	ToolReadFile       = "read_file"
	ToolWriteFile      = "write_file"
	ToolReadToolOutput = "read_tool_output"
)

// controlFlow tools are never withheld by policy: without them a run
// cannot read its own outputs.
func controlFlow(name string) bool { return name == ToolReadToolOutput }

// Shell limits.
const (
	DefaultShellTimeout = 60 * time.Second
	MaxShellTimeout     = 10 * time.Minute
	// MaxShellOutput caps what a command's output may hold in memory;
	// beyond it the output is cut (and anything over OffloadThreshold is
	// offloaded anyway).
	MaxShellOutput = 1 << 20
	// MaxReadFile caps read_file.
	MaxReadFile = 4 << 20
)

type shellParams struct {
	Command  string `json:"command" jsonschema:"the command, run with sh -c in the working directory"`
	TimeoutS int    `json:"timeout_s,omitempty" jsonschema:"seconds before the command is killed (default 60, at most 600)"`
}

type readFileParams struct {
	Path string `json:"path" jsonschema:"path relative to the working directory"`
}

type writeFileParams struct {
	Path    string `json:"path" jsonschema:"path relative to the working directory; folders are created"`
	Content string `json:"content" jsonschema:"the whole new content of the file"`
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
	if r.cfg.Sandbox != "" {
		if err := add(tool.New(ToolShell, "Run a shell command in the working directory (the task's sandbox), where activated skills' files are, and return its output and exit status.", r.shell)); err != nil {
			return nil, err
		}
		if err := add(tool.New(ToolReadFile, "Read a text file from the working directory.", r.readFile)); err != nil {
			return nil, err
		}
		if err := add(tool.New(ToolWriteFile, "Write a text file in the working directory, replacing it if it exists.", r.writeFile)); err != nil {
			return nil, err
		}
	}
	if err := add(tool.New(ToolReadToolOutput, "Read a page of a long tool output that was cut, by its id.", r.readOutput)); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *run) shell(ctx context.Context, p shellParams) (string, error) {
	if strings.TrimSpace(p.Command) == "" {
		return "", skilld.Errorf(skilld.EINVALID, "command is empty")
	}
	timeout := DefaultShellTimeout
	if p.TimeoutS > 0 {
		timeout = min(time.Duration(p.TimeoutS)*time.Second, MaxShellTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", p.Command)
	cmd.Dir = r.cfg.Sandbox
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + r.cfg.Sandbox, "LANG=C.UTF-8", "TMPDIR=" + r.cfg.Sandbox}, r.cfg.ShellEnv...)
	// Its own process group, so a timeout kills what the command started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out capped
	out.limit = MaxShellOutput
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	if out.cut {
		text += fmt.Sprintf("\n[output cut at %d bytes]", MaxShellOutput)
	}
	var exit *exec.ExitError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return text + fmt.Sprintf("\n[killed after %s]", timeout), nil
	case errors.As(err, &exit):
		return text + fmt.Sprintf("\n[exit status %d]", exit.ExitCode()), nil
	case err != nil:
		return "", fmt.Errorf("running the command: %w", err)
	}
	return text + "\n[exit status 0]", nil
}

// capped is a buffer that stops growing at limit.
type capped struct {
	bytes.Buffer
	limit int
	cut   bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.Len(); room < len(p) {
		c.cut = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// sandboxPath cleans a path the model gave and keeps it inside the sandbox.
func sandboxPath(p string) (string, error) {
	clean := path.Clean(strings.TrimPrefix(filepath.ToSlash(p), "./"))
	if p == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", skilld.Errorf(skilld.EINVALID, "path %q must be relative to the working directory and stay inside it", p)
	}
	return clean, nil
}

// openSandbox opens the sandbox as a root, so no path (nor a link inside
// it) can lead out, and returns the cleaned path p within it.
func (r *run) openSandbox(p string) (*os.Root, string, error) {
	rel, err := sandboxPath(p)
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(r.cfg.Sandbox)
	return root, rel, err
}

func (r *run) readFile(_ context.Context, p readFileParams) (string, error) {
	root, rel, err := r.openSandbox(p.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	info, err := root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", skilld.Errorf(skilld.ENOTFOUND, "no file %q in the working directory", p.Path)
	case err != nil:
		return "", skilld.Errorf(skilld.EINVALID, "cannot read %q: %v", p.Path, err)
	case info.IsDir():
		return "", skilld.Errorf(skilld.EINVALID, "%q is a folder; list it with the shell tool", p.Path)
	case info.Size() > MaxReadFile:
		return "", skilld.Errorf(skilld.ETOOLARGE, "%q is %d bytes; read_file reads at most %d (use the shell tool, e.g. head)", p.Path, info.Size(), MaxReadFile)
	}
	b, err := root.ReadFile(rel)
	if err != nil {
		return "", skilld.Errorf(skilld.EINVALID, "cannot read %q: %v", p.Path, err)
	}
	if !utf8.Valid(b) {
		return "", skilld.Errorf(skilld.EINVALID, "%q is not a text file", p.Path)
	}
	return string(b), nil
}

// writeFile replaces the file through a temporary file and a rename: files
// placed from the skill cache are hard links, and writing into them would
// change the cached copy.
func (r *run) writeFile(_ context.Context, p writeFileParams) (string, error) {
	root, rel, err := r.openSandbox(p.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return "", skilld.Errorf(skilld.EINVALID, "cannot create the folders of %q: %v", p.Path, err)
		}
	}
	tmp := rel + ".skilld-tmp"
	if err := root.WriteFile(tmp, []byte(p.Content), 0o644); err != nil {
		return "", skilld.Errorf(skilld.EINVALID, "cannot write %q: %v", p.Path, err)
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return "", skilld.Errorf(skilld.EINVALID, "cannot write %q: %v", p.Path, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(p.Content), rel), nil
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
