package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
)

// contextOf reads an llm.call.started event's context.
func contextOf(t *testing.T, ev agent.Event) agent.RequestContext {
	t.Helper()
	start, _ := ev.Payload.(agent.LLMCallStarted)
	if start.Context == nil {
		t.Fatalf("seq %d: no context: %+v", ev.Seq, ev.Payload)
	}
	return *start.Context
}

// recording is a model answering with answer and keeping every turn's
// request (not the summarizing calls).
func recording(reqs *[]*model.Request, summarize func() (*model.Response, error), answer func(turn int, req *model.Request) *model.Response) modelFunc {
	return func(req *model.Request) (*model.Response, error) {
		if isSummaryRequest(req) {
			return summarize()
		}
		*reqs = append(*reqs, req)
		return answer(len(*reqs), req), nil
	}
}

func isSummaryMessage(m model.Message) bool {
	return m.Role == model.RoleUser && (strings.HasPrefix(m.Content, "[Summary of ") || strings.Contains(m.Content, "earlier messages were left out to fit"))
}

var skillContentName = regexp.MustCompile(`<skill_content name="([^"]+)">`)

// checkContexts checks every llm.call.started event's context against the
// task log the events are, and, when reqs is given, against the request
// the model received (see checkRequestContext). Without the requests it
// checks what the log alone can say: every message before the event is
// sent or in a left-out range, and the counts add up.
func checkContexts(t *testing.T, events []agent.Event, reqs []*model.Request) []agent.RequestContext {
	t.Helper()
	starts := ofType(events, agent.EventLLMCallStarted)
	if reqs != nil && len(reqs) != len(starts) {
		t.Fatalf("%d llm.call.started events, %d requests", len(starts), len(reqs))
	}
	var out []agent.RequestContext
	for i, start := range starts {
		rc := contextOf(t, start)
		out = append(out, rc)
		var before []agent.Event
		for _, ev := range events {
			if ev.Type == agent.EventMessage && ev.Seq < start.Seq {
				before = append(before, ev)
			}
		}
		if p := start.Payload.(agent.LLMCallStarted); p.Messages != rc.Messages.Sent || len(rc.Tools) != p.Tools {
			t.Errorf("call %d: the event says %v messages and %v tools, the context %d and %d", i+1, p.Messages, p.Tools, rc.Messages.Sent, len(rc.Tools))
		}
		var req *model.Request
		if reqs != nil {
			req = reqs[i]
		}
		if err := checkRequestContext(rc, before, req); err != nil {
			t.Errorf("call %d: %v", i+1, err)
		}
	}
	return out
}

// checkRequestContext checks a request's context against the message
// events logged before it (before) and, unless req is nil, the request
// itself: the messages sent are the log's messages outside the left-out
// ranges, in order, plus any summary; the tools offered are the
// request's; the skills are the activations among its messages
// (transcript placement) or the skills in its <current_context>.
func checkRequestContext(rc agent.RequestContext, before []agent.Event, req *model.Request) error {
	m := rc.Messages
	isMessage := func(seq int64) bool {
		return slices.ContainsFunc(before, func(ev agent.Event) bool { return ev.Seq == seq })
	}
	last := int64(0)
	for _, r := range m.LeftOutSeqs {
		if r[0] > r[1] || r[0] <= last || !isMessage(r[0]) || !isMessage(r[1]) {
			return fmt.Errorf("range %v is not a range of messages after %d", r, last)
		}
		last = r[1]
	}
	var kept []agent.Event
	for _, ev := range before {
		if !slices.ContainsFunc(m.LeftOutSeqs, func(r [2]int64) bool { return r[0] <= ev.Seq && ev.Seq <= r[1] }) {
			kept = append(kept, ev)
		}
	}
	if m.LeftOut != len(before)-len(kept) || m.Windowed+m.Compacted != m.LeftOut || m.LeftOutSeqsMore != 0 {
		return fmt.Errorf("%d messages logged, %d outside the ranges; context says %+v", len(before), len(kept), m)
	}
	if req == nil {
		if m.Sent < len(kept) || m.Summarized != (m.Sent > len(kept)) {
			return fmt.Errorf("%d sent, %d logged messages outside the ranges, summarized %v", m.Sent, len(kept), m.Summarized)
		}
		return nil
	}
	var sent []model.Message
	summaries := 0
	for _, msg := range req.Messages {
		if isSummaryMessage(msg) {
			summaries++
			continue
		}
		sent = append(sent, msg)
	}
	if m.Sent != len(req.Messages) || m.Summarized != (summaries > 0) || len(sent) != len(kept) {
		return fmt.Errorf("the request has %d messages (%d summaries), the log %d outside the ranges; context says %+v", len(req.Messages), summaries, len(kept), m)
	}
	var activations []string
	for j, msg := range sent {
		ev := kept[j]
		lm, _ := ev.Payload.(agent.Message)
		if lm.Role != msg.Role || lm.ToolCallID != msg.ToolCallID {
			return fmt.Errorf("message %d is %s %q, the log's seq %d %v %v", j, msg.Role, msg.ToolCallID, ev.Seq, lm.Role, lm.ToolCallID)
		}
		if lm.Skill != "" {
			activations = append(activations, lm.Skill)
		} else if lm.Content != msg.Content {
			return fmt.Errorf("message %d reads %.60q, the log's seq %d %.60q", j, msg.Content, ev.Seq, lm.Content)
		}
	}
	var tools []string
	for _, s := range req.Tools {
		tools = append(tools, s.Name)
	}
	if !slices.Equal(rc.Tools, tools) {
		return fmt.Errorf("tools %v, the request offers %v", rc.Tools, tools)
	}
	want := activations
	if rc.Placement == agent.PlacementContext {
		want = nil
		for _, sm := range skillContentName.FindAllStringSubmatch(req.System, -1) {
			want = append(want, sm[1])
		}
	}
	var names []string
	for _, s := range rc.Skills {
		names = append(names, s.Name)
		if s.Placement != rc.Placement || s.Tokens <= 0 {
			return fmt.Errorf("skill %+v in %s placement", s, rc.Placement)
		}
	}
	if !slices.Equal(names, want) {
		return fmt.Errorf("skills %v, the request carries %v", names, want)
	}
	return nil
}

func noSummary() (*model.Response, error) {
	return nil, fmt.Errorf("no summary expected")
}

// A plain run: the catalog at full detail, then the activation among the
// messages; the event in the log carries the same context.
func TestRequestContextPlainRun(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	guide, other := bigSkill(t, pkgs, "guide", 50), bigSkill(t, pkgs, "other", 50)
	var reqs []*model.Request
	m := recording(&reqs, noSummary, func(turn int, _ *model.Request) *model.Response {
		switch turn {
		case 1:
			return activateCall("guide")
		case 2:
			return calls("emit", map[string]int{"n": 5})
		}
		return &model.Response{Message: model.Message{Content: "done"}}
	})
	log := &agent.MemoryLog{}
	a, err := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Skills: []agent.Skill{guide, other}, Packages: pkgs,
		Tools: []*tool.Tool{emitTool(t)}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "t", Input: "Use the guide."})
	if last := events[len(events)-1]; last.Type != agent.EventTaskCompleted {
		t.Fatalf("last event %s %v", last.Type, last.Payload)
	}
	rcs := checkContexts(t, events, reqs)
	first := rcs[0]
	if first.Window != 100000 || first.Budget != 85000 || first.Placement != agent.PlacementTranscript || first.Catalog == nil ||
		first.Catalog.Level != "full" || !slices.Equal(first.Catalog.Skills, []string{"guide", "other"}) || first.Catalog.Tokens <= 0 ||
		first.Catalog.Budget != 2000 || len(first.Skills) != 0 || first.Messages.Sent != 1 || first.Messages.LeftOut != 0 {
		t.Errorf("first request: %+v", first)
	}
	if first.Tokens.System < first.Catalog.Tokens || first.Tokens.CurrentContext != 0 || first.Tokens.Tools <= 0 ||
		first.Tokens.System+first.Tokens.Tools+first.Tokens.Messages > first.EstimatedTokens {
		t.Errorf("first request's tokens: %+v of %d", first.Tokens, first.EstimatedTokens)
	}
	// A skill in the transcript costs its message.
	var activation agent.Message
	for _, m := range payloads[agent.Message](events) {
		if m.Skill == "guide" {
			activation = m
		}
	}
	if s := rcs[1].Skills; len(s) != 1 || s[0].Name != "guide" || s[0].Tokens != activation.Tokens {
		t.Errorf("second request's skills: %+v; the activation's message %+v", s, activation)
	}
	// The log holds what the stream showed, as JSON.
	starts := ofType(events, agent.EventLLMCallStarted)
	for _, e := range log.Entries() {
		for _, s := range starts {
			if e.Seq != s.Seq {
				continue
			}
			ev, err := agent.EventOf("t", e.Seq, e.Time, e.Kind, e.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := contextOf(t, ev), contextOf(t, s); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(ev.Payload, s.Payload) {
				t.Errorf("seq %d: logged %+v\nstreamed %+v", e.Seq, got, want)
			}
		}
	}
}

// windowingTask runs a context-placement task with a cap of 8 messages
// and earlier turns, and returns its events and requests.
func windowingTask(t *testing.T, log agent.Log) ([]agent.Event, []*model.Request) {
	var reqs []*model.Request
	m := recording(&reqs, noSummary, func(turn int, _ *model.Request) *model.Response {
		if turn < 12 {
			return calls("emit", map[string]int{"n": 10 * turn})
		}
		return &model.Response{Message: model.Message{Content: "done"}}
	})
	history := []model.Message{{Role: model.RoleUser, Content: "earlier question"}, {Role: model.RoleAssistant, Content: "earlier answer"}}
	a, err := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Tools: []*tool.Tool{emitTool(t)},
		Placement: agent.PlacementContext, MaxMessages: 8, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, a, agent.Task{ID: "t", Input: "now this", History: history}), reqs
}

// Windowing: the messages that left the window are counted and named by
// their seqs, and the rest are exactly what the request carries.
func TestRequestContextWindowing(t *testing.T) {
	events, reqs := windowingTask(t, nil)
	rcs := checkContexts(t, events, reqs)
	last := rcs[len(rcs)-1]
	if m := last.Messages; m.Cap != 8 || m.LeftOut == 0 || m.Windowed != m.LeftOut || m.Compacted != 0 || m.Summarized || len(m.LeftOutSeqs) == 0 {
		t.Errorf("last request's messages: %+v", m)
	}
	// The earlier turns left first: the first range starts at the log's
	// first message.
	if first := ofType(events, agent.EventMessage)[0]; last.Messages.LeftOutSeqs[0][0] != first.Seq {
		t.Errorf("ranges %v, first message at seq %d", last.Messages.LeftOutSeqs, first.Seq)
	}
}

// After a compaction: the summarized messages are left out by compaction,
// a summary stands in for them, and the early activation (transcript
// placement) is still among the skills, lifted out of the summary.
func TestRequestContextCompaction(t *testing.T) {
	for _, placement := range []string{agent.PlacementTranscript, agent.PlacementContext} {
		t.Run(placement, func(t *testing.T) {
			pkgs := &agent.MemoryPackages{}
			guide := bigSkill(t, pkgs, "guide", 200)
			var reqs []*model.Request
			m := recording(&reqs, func() (*model.Response, error) {
				return &model.Response{Message: model.Message{Content: "Goal: the long job. Done: many emits."}}, nil
			}, func(turn int, _ *model.Request) *model.Response {
				switch {
				case turn == 1:
					return activateCall("guide")
				case turn < 30:
					return calls("emit", map[string]int{"n": 600}, "emit", map[string]int{"n": 10})
				}
				return &model.Response{Message: model.Message{Content: "finished"}}
			})
			a, err := agent.New(agent.Config{Model: m, Window: 4000, Tokenizer: runeCounter{}, Skills: []agent.Skill{guide}, Packages: pkgs,
				Tools: []*tool.Tool{emitTool(t)}, Placement: placement})
			if err != nil {
				t.Fatal(err)
			}
			events := collect(t, a, agent.Task{ID: "t", Input: "Start the long job."})
			comp := payloads[agent.ContextCompacted](events)
			if len(comp) == 0 {
				t.Fatal("no compaction")
			}
			rcs := checkContexts(t, events, reqs)
			last := rcs[len(rcs)-1]
			summarized := 0
			for _, c := range comp {
				summarized += c.Messages
			}
			if m := last.Messages; !m.Summarized || m.Compacted == 0 || m.Windowed != 0 || len(m.LeftOutSeqs) == 0 || m.Compacted > summarized {
				t.Errorf("last request's messages: %+v; %d messages summarized in all", m, summarized)
			}
			if s := last.Skills; len(s) != 1 || s[0].Name != "guide" || s[0].Placement != placement {
				t.Errorf("last request's skills: %+v", s)
			}
		})
	}
}

// Context placement: skills in load order with the active one last; a
// reactivated skill moves to the end; loading one more unloads the least
// recently used, which leaves the context's skills (not the catalog).
func TestRequestContextUnload(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	var skills []agent.Skill
	for _, n := range []string{"alpha", "beta", "gamma"} {
		skills = append(skills, bigSkill(t, pkgs, n, 50))
	}
	order := []string{"alpha", "beta", "alpha", "gamma"}
	var reqs []*model.Request
	m := recording(&reqs, noSummary, func(turn int, _ *model.Request) *model.Response {
		if turn <= len(order) {
			return activateCall(order[turn-1])
		}
		return &model.Response{Message: model.Message{Content: "done"}}
	})
	a, err := agent.New(agent.Config{Model: m, Window: 20000, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs,
		Placement: agent.PlacementContext, MaxLoaded: 2})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "t", Input: "Use them all."})
	if u := payloads[agent.SkillUnloaded](events); len(u) != 1 || u[0].Skill != "beta" {
		t.Fatalf("unloads: %v", u)
	}
	rcs := checkContexts(t, events, reqs)
	want := [][]string{{}, {"alpha"}, {"alpha", "beta"}, {"beta", "alpha"}, {"alpha", "gamma"}}
	for i, rc := range rcs {
		var names []string
		for j, s := range rc.Skills {
			names = append(names, s.Name)
			if s.Active != (j == len(rc.Skills)-1) {
				t.Errorf("call %d: %+v active is wrong", i+1, s)
			}
		}
		if !slices.Equal(names, want[i]) && !(len(names) == 0 && len(want[i]) == 0) {
			t.Errorf("call %d: skills %v, want %v", i+1, names, want[i])
		}
		if !slices.Equal(rc.Catalog.Skills, []string{"alpha", "beta", "gamma"}) || rc.Tokens.CurrentContext < 0 || (len(names) > 0) != (rc.Tokens.CurrentContext > 0) {
			t.Errorf("call %d: catalog %+v, tokens %+v", i+1, rc.Catalog, rc.Tokens)
		}
	}
}

// A resumed run: what it replays keeps the logged context, and what it
// asks live names the seqs of the resumed log, whose task.resumed marker
// moved the later entries one further on.
func TestRequestContextResumed(t *testing.T) {
	full := &agent.MemoryLog{}
	windowingTask(t, full)
	want := full.Entries()
	var answers []answer
	for _, e := range want {
		if resp, ok := answerOf(e); ok {
			answers = append(answers, answer{resp: resp})
		}
	}
	// Cut after the sixth llm.call.started: half the calls are live.
	k, starts := 0, 0
	for i, e := range want {
		if e.Kind == agent.KindEvent && bytes.Contains(e.Payload, []byte(`"type":"`+agent.EventLLMCallStarted+`"`)) {
			if starts++; starts == 6 {
				k = i + 1
				break
			}
		}
	}
	log := agent.NewMemoryLog(want[:k])
	a, err := agent.New(agent.Config{Model: &playback{answers: answers}, Window: 100000, Tokenizer: runeCounter{}, Tools: []*tool.Tool{emitTool(t)},
		Placement: agent.PlacementContext, MaxMessages: 8, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	history := []model.Message{{Role: model.RoleUser, Content: "earlier question"}, {Role: model.RoleAssistant, Content: "earlier answer"}}
	live := collect(t, a, agent.Task{ID: "t", Input: "now this", History: history, Resume: want[:k]})
	if live[0].Type != agent.EventTaskResumed {
		t.Fatalf("first live event %s", live[0].Type)
	}
	var events []agent.Event
	for _, e := range log.Entries() {
		ev, err := agent.EventOf("t", e.Seq, e.Time, e.Kind, e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	rcs := checkContexts(t, events, nil)
	if len(rcs) != 12 || rcs[len(rcs)-1].Messages.LeftOut == 0 {
		t.Errorf("%d requests; the last %+v", len(rcs), rcs[len(rcs)-1].Messages)
	}
	if got := normalized(log.Entries()); len(got) != len(want) {
		t.Errorf("the resumed log has %d entries, the first %d", len(got), len(want))
	} else if err := sameLog(got, normalized(want)); err != nil {
		t.Error(err)
	}
}

// answerOf reads a model's answer, as the run logged it, from a log entry
// (not the earlier turns of the task's history).
func answerOf(e agent.LogEntry) (*model.Response, bool) {
	if e.Kind != agent.KindMessage {
		return nil, false
	}
	var m struct {
		model.Message
		Usage      *model.Usage `json:"usage"`
		StopReason string       `json:"stop_reason"`
	}
	if json.Unmarshal(e.Payload, &m) != nil || m.Role != model.RoleAssistant || m.Usage == nil {
		return nil, false
	}
	return &model.Response{Message: m.Message, Usage: *m.Usage, StopReason: m.StopReason}, true
}
