package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/history"
	"github.com/skilld/skilld/agent/model"
)

// compactInstruction is the system prompt of a summarizing call.
const compactInstruction = "You summarize the earlier part of an agent's working conversation, so that the agent can go on without it. " +
	"Write a compact summary that keeps: the user's goal and constraints; the decisions taken and why; the results obtained " +
	"(facts, numbers, names of files, commands that worked); the progress (what is done, what is left); the errors met and how " +
	"they were handled. Write only the summary, in plain sentences; do not invent anything and do not address the user."

// maxSummaryTokens caps a summary's length.
const maxSummaryTokens = 4096

// compact replaces the view's oldest unprotected messages, between the
// first message and the newest KeepRecent, by one summary the model
// writes; protected groups among them are lifted out and kept verbatim,
// in order. When no summary can be had (the call fails, or the summary
// saves nothing), the messages are replaced by a marker saying so, and
// the task goes on. It reports whether the view changed.
func (r *run) compact(ctx context.Context) bool {
	plan, ok := history.Compaction(r.view.groups, KeepRecent)
	if !ok {
		return false
	}
	before := r.view.tokens
	messages := history.Messages(pick(r.view.groups, plan.Summarize))
	summary, usage, asked, err := r.summarize(ctx, plan)
	if err == nil && r.count(summary) >= plan.Tokens {
		err = skilld.Errorf(skilld.EINVALID, "the summary (%d tokens) was no shorter than what it summarized (%d)", r.count(summary), plan.Tokens)
	}
	r.compactions++
	ev := ContextCompacted{Messages: messages, Lifted: history.Messages(pick(r.view.groups, plan.Lifted)), Count: r.compactions, Usage: usage, Asked: asked}
	var text string
	if err != nil {
		text = fmt.Sprintf("[%d earlier messages were left out to fit the context window; summarizing them failed (%s)]", messages, errorText(err))
		ev.Error = errorText(err)
	} else {
		text = fmt.Sprintf("[Summary of %d earlier messages, made to keep the conversation within the context window]\n%s", messages, strings.TrimSpace(summary))
		ev.Summarized, ev.Summary = true, summary
	}
	e := entry{msg: model.Message{Role: model.RoleUser, Content: text}, summary: true}
	e.tokens = messageTokens(r.cfg.Tokenizer, e.msg)
	keep := slices.Concat(plan.Head, plan.Lifted, plan.Tail)
	r.view.rebuild(keep, []entry{e}, len(plan.Head), true)
	ev.TokensBefore, ev.TokensAfter, ev.Saved = before, r.view.tokens, before-r.view.tokens
	r.emit(ctx, ev)
	r.warned = false
	return true
}

// pick returns the groups at idx.
func pick(groups []history.Group, idx []int) []history.Group {
	out := make([]history.Group, len(idx))
	for i, g := range idx {
		out[i] = groups[g]
	}
	return out
}

// summarize asks the model for a summary of the plan's messages, rendered
// as plain text (tool calls and results included) within half of the
// effective window; asked says whether the model was asked.
func (r *run) summarize(ctx context.Context, plan history.Plan) (summary string, usage model.Usage, asked bool, err error) {
	var msgs []model.Message
	for _, g := range pick(r.view.groups, plan.Summarize) {
		for _, e := range r.view.entries[g.From:g.To] {
			msgs = append(msgs, e.msg)
		}
	}
	budget := r.effectiveWindow() / 2
	var text string
	for perMessage := 4000; ; perMessage /= 2 {
		text = renderForSummary(msgs, perMessage)
		if r.count(text) <= budget || perMessage < 100 {
			break
		}
	}
	if r.count(text) > budget {
		return "", model.Usage{}, false, skilld.Errorf(skilld.ETOOLARGE, "the messages to summarize do not fit in half of the window")
	}
	maxTokens := min(maxSummaryTokens, r.cfg.Window/10)
	if r.cfg.MaxTokens > 0 {
		maxTokens = min(maxTokens, r.cfg.MaxTokens)
	}
	if r.replaying() {
		if text, usage, err, ok := r.rp.summary(); ok {
			if errors.Is(err, ErrDiverged) {
				r.diverged(ctx, err)
			}
			return text, usage, true, err
		}
	}
	resp, err := r.ask(ctx, StepCompaction, &model.Request{Model: r.cfg.ModelName, System: compactInstruction, MaxTokens: maxTokens,
		Messages: []model.Message{{Role: model.RoleUser, Content: "Summarize this part of the conversation:\n\n" + text}}})
	if err != nil {
		return "", model.Usage{}, true, err
	}
	if strings.TrimSpace(resp.Message.Content) == "" {
		return "", resp.Usage, true, skilld.Errorf(skilld.EINVALID, "the model answered with an empty summary")
	}
	return resp.Message.Content, resp.Usage, true, nil
}

// renderForSummary writes messages as a plain transcript, each cut to
// perMessage characters.
func renderForSummary(msgs []model.Message, perMessage int) string {
	var b strings.Builder
	for _, m := range msgs {
		who := string(m.Role)
		if m.Role == model.RoleTool {
			who = "tool " + m.ToolName
			if m.IsError {
				who += " (error)"
			}
		}
		fmt.Fprintf(&b, "[%s] %s\n", who, cut(m.Content, perMessage))
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "[%s calls %s] %s\n", m.Role, c.Name, cut(string(c.Arguments), perMessage))
		}
	}
	return b.String()
}
