package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
)

// How a trace shows tool output and the status line.
const (
	// outputLines is how many lines of a tool's output the trace shows;
	// the rest is counted.
	outputLines = 6
	// outputWidth cuts each shown line.
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
	// taskID, when set, is the server task being followed: a call
	// waiting for approval is answered with skilld tasks approve/deny.
	taskID string

	mu sync.Mutex
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
	d := plainData(ev)
	if ev.Type == agent.EventMessage && d["role"] == string(model.RoleAssistant) {
		calls, _ := ev.Data["tool_calls"].([]model.ToolCall)
		p.assistant(d, calls)
		return
	}
	p.endText()
	w := p.e.stdout
	switch ev.Type {
	case agent.EventMessage:
		if d["role"] == string(model.RoleTool) {
			p.status = ""
			p.toolResult(d)
		}
	case agent.EventSkillWithheld:
		fmt.Fprintf(w, "skill %s withheld: %s\n", d["skill"], d["rule"])
	case agent.EventSkillActivated:
		fmt.Fprintf(w, "skill %s activated (%v tokens)\n", d["skill"], d["tokens"])
	case agent.EventSkillRefused:
		fmt.Fprintf(w, "skill %s refused: %s\n", d["skill"], d["reason"])
	case agent.EventSkillUnloaded:
		fmt.Fprintf(w, "skill %s unloaded: %s\n", d["skill"], d["reason"])
	case agent.EventSkillMaterialized:
		if d["error"] != nil {
			fmt.Fprintf(w, "skill %s: files not placed: %v\n", d["skill"], d["error"])
		} else {
			fmt.Fprintf(w, "skill %s: %v files in %s/\n", d["skill"], d["files"], d["dir"])
		}
	case agent.EventToolDenied:
		fmt.Fprintf(w, "tool %s denied: %s\n", d["tool"], d["reason"])
	case agent.EventApprovalRequested:
		fmt.Fprintf(w, "tool %s needs approval: %s (call %s)\n", d["tool"], d["reason"], d["call_id"])
		if p.taskID != "" {
			fmt.Fprintf(w, "  answer with: skilld tasks approve %s %s   (or: skilld tasks deny %s %s)\n", p.taskID, d["call_id"], p.taskID, d["call_id"])
		}
	case agent.EventApprovalDecided:
		verdict := "refused"
		if d["approved"] == true {
			verdict = "approved"
		}
		fmt.Fprintf(w, "call %s of %s %s\n", d["call_id"], d["tool"], verdict)
	case agent.EventContextCompacted:
		fmt.Fprintf(w, "context compacted: %v older messages summarized, %v tokens saved\n", d["messages"], d["saved"])
	case agent.EventCatalogShortened:
		fmt.Fprintf(w, "catalog shortened to fit its budget: %s\n", d["level"])
	case agent.EventTaskCompleted:
		p.status = ""
		fmt.Fprintf(w, "✓ completed\n")
	case agent.EventTaskFailed:
		p.status = ""
		fmt.Fprintf(w, "✗ failed: %s\n", d["error"])
	}
}

// assistant shows a model's answer: what was not streamed already, and
// the calls it makes (calls as the event has them, arguments unchanged;
// nil to read them from d).
func (p *printer) assistant(d map[string]any, calls []model.ToolCall) {
	w := p.e.stdout
	p.status = ""
	content, _ := d["content"].(string)
	streamed := p.streamed.String()
	p.streamed.Reset()
	p.endText()
	if content != "" && content != streamed {
		fmt.Fprintf(w, "assistant: %s\n", content)
	}
	if calls == nil {
		if b, err := json.Marshal(d["tool_calls"]); err == nil {
			json.Unmarshal(b, &calls)
		}
	}
	for _, c := range calls {
		fmt.Fprintf(w, "→ %s %s\n", c.Name, abbreviate(string(c.Arguments), outputWidth))
	}
}

// toolResult shows a tool's output as lines, indented under the call,
// cut after outputLines. An activation's result is not shown: the
// skill.activated line before it says what was loaded and its size (the
// message's own count is 4 tokens more, the framing every message costs).
func (p *printer) toolResult(d map[string]any) {
	if d["skill"] != nil {
		return
	}
	content, _ := d["content"].(string)
	prefix := "  ←"
	if d["is_error"] == true {
		prefix = "  ✗"
	}
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	for i, line := range lines {
		if i == outputLines {
			fmt.Fprintf(p.e.stdout, "    … %d more lines\n", len(lines)-i)
			break
		}
		if i > 0 {
			prefix = "   "
		}
		fmt.Fprintf(p.e.stdout, "%s %s\n", prefix, cutLine(line, outputWidth))
	}
}

// plainData is the event's data as JSON has it (strings, float64 numbers,
// []any, map[string]any), whether the event was made in this process or
// read from a server, so the trace reads both alike.
func plainData(ev agent.Event) map[string]any {
	b, err := json.Marshal(ev)
	if err != nil {
		return ev.Data
	}
	var out agent.Event
	if json.Unmarshal(b, &out) != nil {
		return ev.Data
	}
	return out.Data
}

// cutLine cuts one line of output to n characters, tabs shown as spaces.
func cutLine(s string, n int) string {
	s = strings.ReplaceAll(strings.TrimRight(s, "\r"), "\t", "    ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// abbreviate puts s on one line, cut to n characters.
func abbreviate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
