package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/callview"
	"github.com/skilld/skilld/agent/model"
)

// How a trace shows tool output and the status line.
const (
	// outputLines is how many lines of a tool's output the trace shows
	// when the call succeeded; the rest is counted.
	outputLines = 6
	// failedLines is how many of a failed call's last lines the trace
	// shows, uncut: enough for a Python traceback.
	failedLines = 30
	// commandLines is how many lines of a shell command the trace shows.
	commandLines = 10
	// outputWidth cuts each shown line of a call that succeeded, and the
	// arguments of other tools.
	outputWidth = 200
	// statusDelay: a step shorter than this never shows the status line,
	// so quick tool calls do not flicker.
	statusDelay = time.Second
	// statusWidth keeps the status line on one terminal row.
	statusWidth = 72
)

// printer shows a task's events: one JSON line each (--json), or a
// readable trace. For a run in this process it also shows what happens
// between events: the model's text as it streams, each retry of a model
// call as it starts, and, when stderr is a terminal, one status line
// saying what the run waits for and for how long.
type printer struct {
	e    *env
	json bool
	// verbose shows every line of every call: its arguments and its
	// output, uncut.
	verbose bool
	// taskID, when set, is the server task being followed: a call
	// waiting for approval is answered with skilld tasks approve/deny.
	taskID string

	mu sync.Mutex
	// result is a tool's message, waiting for the tool.result event after
	// it, which says whether it failed and how its command exited.
	result *agent.Message
	// failed counts the calls shown as failed, for the task's last line.
	failed int
	// streamed is the text of the current model call shown so far; open
	// says its line still waits for its newline.
	streamed strings.Builder
	open     bool
	// step is the run's live step, from its gate: only a turn's text is
	// streamed, not a compaction's summary.
	step agent.StepKind
	// The status line: what the run waits for ("" for nothing), since
	// when, and whether it is on the screen now.
	status      string
	statusSince time.Time
	statusShown bool
	stop        chan struct{}
	stopped     chan struct{}
}

func newPrinter(e *env, json bool) *printer {
	return &printer{e: e, json: json}
}

// verboseFlag registers -v and --verbose, the printer's verbose.
func verboseFlag(fs *flag.FlagSet) *bool {
	v := fs.Bool("verbose", false, "show every line of every tool call: its arguments and all of its output")
	fs.BoolVar(v, "v", false, "short for --verbose")
	return v
}

// live turns on the status line when stderr is a terminal; close turns it
// off.
func (p *printer) live() {
	if p.json || !p.e.terminal {
		return
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	p.stop, p.stopped = stop, stopped
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				p.mu.Lock()
				p.drawStatus()
				p.mu.Unlock()
			}
		}
	}()
}

// close ends the live output: the status line goes and an open line of
// text gets its newline.
func (p *printer) close() {
	p.mu.Lock()
	stop, stopped := p.stop, p.stopped
	p.stop = nil // the ticker draws nothing from now on
	p.setStatus("")
	p.endText()
	p.showResult(nil)
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// gate is the run's agent.Config.Gate: it lets every step run at once and
// notes what the run now waits for.
func (p *printer) gate(_ context.Context, s agent.Step) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step = s.Kind
	switch s.Kind {
	case agent.StepModel:
		p.setStatus("waiting for the model")
	case agent.StepCompaction:
		p.setStatus("summarizing older messages to fit the window")
	case agent.StepTool:
		p.setStatus("running " + s.Tool)
	default: // an approval: the approver has the terminal
		p.setStatus("")
	}
	return nil
}

// text shows a piece of the model's answer as it arrives.
func (p *printer) text(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json || p.step != agent.StepModel {
		return
	}
	p.clearStatus()
	if !p.open {
		io.WriteString(p.e.stdout, "assistant: ")
		p.open = true
	}
	io.WriteString(p.e.stdout, s)
	p.streamed.WriteString(s)
}

// retry says that a model call is being sent again, as it is.
func (p *printer) retry(r model.Retry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearStatus()
	p.endText()
	of := ""
	if r.Attempts > 1 {
		of = fmt.Sprintf(" of %d", r.Attempts-1)
	}
	fmt.Fprintf(p.e.stderr, "%s: %s; retry %d%s\n", r.Provider, r.Reason, r.Attempt-1, of)
	if p.status != "" {
		p.status = fmt.Sprintf("waiting for the model (retry %d%s)", r.Attempt-1, of)
	}
	p.drawStatus()
}

// setStatus changes what the status line says; the clock restarts.
func (p *printer) setStatus(s string) {
	p.clearStatus()
	p.status, p.statusSince = s, time.Now()
}

// drawStatus (re)draws the status line when there is one to show.
func (p *printer) drawStatus() {
	if p.stop == nil || p.status == "" || p.open || time.Since(p.statusSince) < statusDelay {
		return
	}
	line := fmt.Sprintf("… %s · %s", p.status, time.Since(p.statusSince).Round(time.Second))
	fmt.Fprintf(p.e.stderr, "\r\033[K%s", short(line, statusWidth))
	p.statusShown = true
}

func (p *printer) clearStatus() {
	if p.statusShown {
		io.WriteString(p.e.stderr, "\r\033[K")
		p.statusShown = false
	}
}

// endText ends a streamed line of text.
func (p *printer) endText() {
	if p.open {
		io.WriteString(p.e.stdout, "\n")
		p.open = false
	}
}

// event shows one event.
func (p *printer) event(ev agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		b, _ := json.Marshal(ev)
		fmt.Fprintf(p.e.stdout, "%s\n", b)
		return
	}
	p.clearStatus()
	defer p.drawStatus()
	if r, ok := ev.Payload.(agent.ToolResult); ok {
		p.showResult(&r)
		return
	}
	p.showResult(nil)
	if m, ok := ev.Payload.(agent.Message); ok && m.Role == model.RoleAssistant {
		p.assistant(m)
		return
	}
	p.endText()
	w := p.e.stdout
	switch d := ev.Payload.(type) {
	case agent.Message:
		// An activation's result is not shown: the skill.activated line
		// before it says what was loaded and its size (the message's own
		// count is 4 tokens more, the framing every message costs).
		if d.Role == model.RoleTool && d.Skill == "" {
			p.status = ""
			p.result = &d
		}
	case agent.SkillWithheld:
		fmt.Fprintf(w, "skill %s withheld: %s\n", d.Skill, d.Rule)
	case agent.SkillActivated:
		fmt.Fprintf(w, "skill %s activated (%d tokens)\n", d.Skill, d.Tokens)
	case agent.SkillRefused:
		fmt.Fprintf(w, "skill %s refused: %s\n", d.Skill, d.Reason)
	case agent.SkillUnloaded:
		fmt.Fprintf(w, "skill %s unloaded: %s\n", d.Skill, d.Reason)
	case agent.SkillMaterialized:
		if d.Error != "" {
			fmt.Fprintf(w, "skill %s: files not placed: %s\n", d.Skill, d.Error)
		} else {
			fmt.Fprintf(w, "skill %s: %d files in %s/\n", d.Skill, d.Files, d.Dir)
		}
	case agent.SkillEnvironment:
		p.environment(d)
	case agent.ToolDenied:
		fmt.Fprintf(w, "tool %s denied: %s\n", d.Tool, d.Reason)
	case agent.ApprovalRequested:
		fmt.Fprintf(w, "tool %s needs approval: %s (call %s)\n", d.Tool, d.Reason, d.CallID)
		if p.taskID != "" {
			fmt.Fprintf(w, "  answer with: skilld tasks approve %s %s   (or: skilld tasks deny %s %s)\n", p.taskID, d.CallID, p.taskID, d.CallID)
		}
	case agent.ApprovalDecided:
		verdict := "refused"
		if d.Approved {
			verdict = "approved"
		}
		fmt.Fprintf(w, "call %s of %s %s\n", d.CallID, d.Tool, verdict)
	case agent.ContextCompacted:
		fmt.Fprintf(w, "context compacted: %d older messages summarized, %d tokens saved\n", d.Messages, d.Saved)
	case agent.CatalogShortened:
		if d.Unlisted > 0 {
			fmt.Fprintf(w, "catalog shortened to fit its budget: %s (%d listed, %d more for search_skills to find)\n", d.Level, len(d.Listed), d.Unlisted)
		} else {
			fmt.Fprintf(w, "catalog shortened to fit its budget: %s\n", d.Level)
		}
	case agent.TaskCompleted:
		p.status = ""
		switch p.failed {
		case 0:
			fmt.Fprintf(w, "✓ completed\n")
		case 1:
			fmt.Fprintf(w, "✓ completed, but 1 tool call failed (✗ above)\n")
		default:
			fmt.Fprintf(w, "✓ completed, but %d tool calls failed (✗ above)\n", p.failed)
		}
	case agent.TaskFailed:
		p.status = ""
		fmt.Fprintf(w, "✗ failed: %s\n", d.Error)
	}
}

// environment shows a skill's dependencies being installed: its progress
// on the status line, its end as a line, with the installer's last lines
// when it failed.
func (p *printer) environment(d agent.SkillEnvironment) {
	w := p.e.stdout
	switch d.State {
	case "preparing":
		p.setStatus(fmt.Sprintf("readying %s's dependencies", d.Skill))
	case "building":
		p.status = fmt.Sprintf("installing %s's dependencies: %s", d.Skill, d.Line)
	case "ready":
		p.status = ""
		how := "installed"
		if d.EnvironmentLayer != nil {
			how = fmt.Sprintf("%s, installed in %s", strings.Join(d.Kinds, " and "), time.Duration(d.DurationMS)*time.Millisecond)
			if d.Cached {
				how = strings.Join(d.Kinds, " and ") + ", installed before"
			}
		}
		fmt.Fprintf(w, "skill %s: dependencies ready (%s)\n", d.Skill, how)
	case "failed":
		p.status = ""
		fmt.Fprintf(w, "skill %s: dependencies not installed: %s\n", d.Skill, d.Error)
		for _, l := range strings.Split(strings.TrimSpace(d.Output), "\n") {
			if l != "" {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
	}
}

// assistant shows a model's answer: what was not streamed already, and
// the calls it makes, their arguments as a person reads them.
func (p *printer) assistant(m agent.Message) {
	w := p.e.stdout
	p.status = ""
	streamed := p.streamed.String()
	p.streamed.Reset()
	p.endText()
	if m.Content != "" && m.Content != streamed {
		fmt.Fprintf(w, "assistant: %s\n", m.Content)
	}
	for _, c := range m.ToolCalls {
		a := callview.ParseArgs(c.Name, c.Arguments)
		if a.Command == "" {
			fmt.Fprintf(w, "→ %s %s\n", c.Name, p.fit(a.String(), outputWidth))
			continue
		}
		// A command as typed, one line of the trace per line of it.
		name := c.Name
		if len(a.Pairs) > 0 {
			name += " (" + callview.Args{Pairs: a.Pairs}.String() + ")"
		}
		lines := strings.Split(a.Command, "\n")
		more := 0
		if !p.verbose {
			lines, more = callview.Head(lines, commandLines)
		}
		for i, l := range lines {
			if i == 0 {
				fmt.Fprintf(w, "→ %s: %s\n", name, l)
			} else {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
		if more > 0 {
			fmt.Fprintf(w, "    … %d more lines of the command (-v shows them)\n", more)
		}
	}
}

// showResult shows the tool message waiting for its tool.result (ev; nil
// when another event came first), indented under the call. A call that
// succeeded shows its first lines, cut; a failed one (a tool error, a
// command that exited non-zero) its last lines in full, where a
// traceback's end is; then a command's exit status.
func (p *printer) showResult(ev *agent.ToolResult) {
	m := p.result
	if m == nil {
		return
	}
	p.result = nil
	var exit *int
	if ev != nil && ev.CallID == m.ToolCallID {
		exit = ev.ExitCode
	}
	r := callview.NewResult(m.Content, m.IsError, exit)
	failed := r.Failed()
	lines := callview.Lines(r.Output)
	var rows []string
	switch {
	case p.verbose:
		rows = lines
	case failed:
		shown, earlier := callview.Tail(lines, failedLines)
		if earlier > 0 {
			rows = append(rows, fmt.Sprintf("… %d earlier lines (-v shows them)", earlier))
		}
		rows = append(rows, shown...)
	default:
		shown, more := callview.Head(lines, outputLines)
		for _, l := range shown {
			rows = append(rows, cutLine(l, outputWidth))
		}
		if more > 0 {
			rows = append(rows, fmt.Sprintf("… %d more lines (-v shows them)", more))
		}
	}
	w := p.e.stdout
	prefix := "  ←"
	if r.IsError {
		prefix = "  ✗"
	}
	for i, row := range rows {
		if i > 0 {
			prefix = "   "
		}
		fmt.Fprintf(w, "%s %s\n", prefix, strings.ReplaceAll(strings.TrimRight(row, "\r"), "\t", "    "))
	}
	mark := "✓"
	if failed {
		mark = "✗"
		p.failed++
	}
	if status := r.Status(); r.Exit != nil {
		fmt.Fprintf(w, "  %s %s\n", mark, status)
	}
}

// fit is s on one line, cut to n characters unless the trace is verbose.
func (p *printer) fit(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if p.verbose {
		return s
	}
	return cutLine(s, n)
}

// cutLine cuts one line of output to n characters, tabs shown as spaces.
func cutLine(s string, n int) string {
	s = strings.ReplaceAll(strings.TrimRight(s, "\r"), "\t", "    ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
