package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/policy"
)

// callTool gates and runs one tool call and appends its result. Every call
// is checked again with the same policy that chose what was offered
// (defense in depth); a tool that was not offered is unknown to the model.
func (r *run) callTool(ctx context.Context, call model.ToolCall) {
	r.emit(ctx, ToolCall{CallRef: refOf(call), ArgumentsChars: len(call.Arguments)})
	o, ok := r.offered[call.Name]
	if !ok {
		// A tool the policy withheld is as unknown to the model as one
		// that does not exist (or belongs to a skill that is not loaded);
		// the event says why.
		if v := r.cfg.Policy.Decide(call.Name); v.Decision == policy.Deny && r.knownTool(call.Name) {
			r.emit(ctx, ToolDenied{CallRef: refOf(call), Reason: v.Reason()})
		}
		err := skilld.Errorf(skilld.ENOTFOUND, "Unknown tool: %s", call.Name)
		if call.Name == ActivateSkill && len(r.disclosed) == 0 && len(r.withheld) > 0 {
			err = skilld.Errorf(skilld.ENOTFOUND, "Unknown tool: %s: %s", call.Name, strings.ReplaceAll(strings.TrimSpace(withheldText(r.withheld)), "\n", " "))
		}
		r.toolResult(ctx, call, "", err)
		return
	}
	if !controlFlow(call.Name) {
		v := r.cfg.Policy.Decide(call.Name)
		switch v.Decision {
		case policy.Deny:
			r.emit(ctx, ToolDenied{CallRef: refOf(call), Reason: v.Reason()})
			r.toolResult(ctx, call, "", skilld.Errorf(skilld.EFORBIDDEN, "tool %s is %s", call.Name, v.Reason()))
			return
		case policy.RequireApproval:
			if skill, entry := r.preapproved(call); skill != "" {
				r.emit(ctx, ToolPreapproved{CallRef: refOf(call), Skill: skill, Allowed: entry, Reason: v.Reason()})
			} else if !r.approve(ctx, call, v) {
				return
			}
		}
	}
	if r.replaying() && call.Name != ActivateSkill && call.Name != SearchSkills && o.skill == "" {
		// Recorded: the tool is not run again. (Activations and Go skills'
		// tools are: they rebuild the run's skills and their state, and
		// their recorded results are then used. So are searches, which
		// read only the snapshot: their skills.searched event is then
		// matched to the log's, even when the run stopped between it and
		// the result.)
		rec, found, err := r.rp.toolResult(call.ID, r.store.restore)
		switch {
		case err != nil:
			r.diverged(ctx, err)
			return
		case found:
			r.toolResultAs(ctx, call, rec, "")
			return
		}
		// The call was running when the task stopped.
		r.goLive(ctx)
		if !o.tool.Idempotent {
			r.toolResultAs(ctx, call, interrupted(call), "")
			return
		}
	}
	if !r.replaying() {
		if err := r.gate(ctx, Step{Kind: StepTool, Tool: call.Name, CallID: call.ID}); err != nil {
			return
		}
	}
	callCtx := ctx
	if o.skill != "" {
		callCtx = context.WithValue(ctx, skillContextKey{}, r.active[o.skill].sc)
	}
	report := &callReport{ref: refOf(call)}
	callCtx = context.WithValue(callCtx, callReportKey{}, report)
	var out string
	var err error
	if !r.effect(ctx, func() { out, err = o.tool.Call(callCtx, call.Arguments) }) {
		return
	}
	// What a secret's command printed, or a file it wrote, is the model's
	// to read only with the secret's value replaced by its name.
	out = r.secrets.redact(out)
	if err == nil && call.Name != ToolReadToolOutput && call.Name != ActivateSkill {
		// read_tool_output pages are already bounded; offloading them
		// again would send the model round in circles. Activations have
		// their own budgets (a skill over its share is summarized with
		// its sandbox path), and cutting one would lose instructions.
		var id string
		out, id, err = offload(ctx, r.cfg.Outputs, out)
		if id != "" {
			r.emit(ctx, ToolOffloaded{CallRef: refOf(call), OutputID: id})
		}
	}
	skill := ""
	if call.Name == ActivateSkill && err == nil {
		skill = r.res.protect(call)
	}
	outcome := outcomeOf(out, err)
	outcome.exitCode = report.exitCode
	r.toolResultAs(ctx, call, outcome, skill)
	if !o.tool.Idempotent {
		// The result of a call that must not run twice goes to the log
		// now, not with the next step's entries: a run stopped before
		// that resumes with the result, not an interrupted call.
		r.flush(ctx)
	}
}

// callReport is what a tool says about its call besides the text the
// model reads: the exit status of the command it ran, so that the event
// and the log carry it as a field and readers need not parse the text.
type callReport struct {
	ref      CallRef
	exitCode *int
}

type callReportKey struct{}

// callOf names the call a tool runs for.
func callOf(ctx context.Context) CallRef {
	if r, ok := ctx.Value(callReportKey{}).(*callReport); ok {
		return r.ref
	}
	return CallRef{}
}

// reportExit records the exit status of the command a call ran.
func reportExit(ctx context.Context, code int) {
	if r, ok := ctx.Value(callReportKey{}).(*callReport); ok {
		r.exitCode = &code
	}
}

// preapproved returns the active skill whose allowed-tools entry matches
// the call, if one does.
func (r *run) preapproved(call model.ToolCall) (skill, entry string) {
	for _, name := range r.res.order() {
		for _, a := range r.active[name].allowed {
			if a.matches(call.Name, call.Arguments) {
				return name, a.entry
			}
		}
	}
	return "", ""
}

// approve asks the approver about a call and reports whether it may run;
// when not, the refusal is already in the transcript.
func (r *run) approve(ctx context.Context, call model.ToolCall, v policy.Verdict) bool {
	r.emit(ctx, ApprovalRequested{CallRef: refOf(call), Reason: v.Reason()})
	if r.cfg.Approver == nil {
		r.emit(ctx, ToolDenied{CallRef: refOf(call), Reason: v.Reason() + "; no one can approve calls in this run"})
		r.toolResult(ctx, call, "", skilld.Errorf(skilld.EFORBIDDEN, "tool %s %s, and no one can approve calls in this run", call.Name, v.Reason()))
		return false
	}
	var ok bool
	var err error
	if approved, found := r.rp.approval(call.ID); found && r.replaying() {
		ok = approved
	} else {
		r.goLive(ctx)
		if err := r.gate(ctx, Step{Kind: StepApproval, Tool: call.Name, CallID: call.ID}); err != nil {
			return false
		}
		ok, err = r.cfg.Approver.Approve(ctx, ApprovalRequest{TaskID: r.task.ID, CallID: call.ID, Tool: call.Name, Arguments: call.Arguments, Reason: v.Reason()})
	}
	r.emit(ctx, ApprovalDecided{CallRef: refOf(call), Approved: ok && err == nil})
	if err != nil || !ok {
		reason := "the call was rejected"
		if err != nil {
			reason = "no decision: " + skilld.ErrorMessage(err)
		}
		r.emit(ctx, ToolDenied{CallRef: refOf(call), Reason: reason})
		r.toolResult(ctx, call, "", skilld.Errorf(skilld.EFORBIDDEN, "tool %s: %s", call.Name, reason))
		return false
	}
	return true
}

func (r *run) toolResult(ctx context.Context, call model.ToolCall, out string, err error) {
	r.toolResultAs(ctx, call, outcomeOf(out, err), "")
}

// outcomeOf is a tool's output, or its error as a tool error the model
// reads, naming what went wrong.
func outcomeOf(out string, err error) toolOutcome {
	if err != nil {
		return toolOutcome{content: "Error: " + errorText(err), isError: true, code: skilld.ErrorCode(err)}
	}
	return toolOutcome{content: out}
}

// toolResultAs records a call's result: the message the model reads, then
// the event about it (so a run stopped between the two resumes with the
// result). While a resumed run replays, the recorded result stands.
func (r *run) toolResultAs(ctx context.Context, call model.ToolCall, o toolOutcome, skill string) {
	if r.replaying() {
		if rec, ok := r.rp.recordedResult(call.ID); ok {
			o = rec
		}
	}
	msg := model.Message{Role: model.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Content: r.secrets.redact(o.content), IsError: o.isError}
	ev := ToolResult{CallRef: refOf(call), Chars: len(msg.Content), ExitCode: o.exitCode}
	if o.isError {
		ev.IsError, ev.ErrorCode = true, o.code
	}
	r.add(ctx, logMessage{Message: msg, Skill: skill, Tokens: o.tokens, ErrorCode: o.code, ExitCode: o.exitCode})
	r.emit(ctx, ev)
}

// errorText is what the model reads of an error: the typed message when
// there is one, the whole text otherwise.
func errorText(err error) string {
	if skilld.ErrorCode(err) != skilld.EINTERNAL {
		return skilld.ErrorMessage(err)
	}
	return fmt.Sprint(err)
}
