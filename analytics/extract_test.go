package analytics_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/analytics"
)

// checkAgainstLog holds extracted rows to the events of the log they came
// from, counted here independently: activations, refusals and unloads per
// skill, the outcome, and every row's invariants.
func checkAgainstLog(t *testing.T, log []agent.LogEntry, rows []analytics.TaskSkill) {
	t.Helper()
	acts, refs, unloads := map[string]int{}, map[string]int{}, map[string]int{}
	outcome := analytics.OutcomeUnfinished
	for _, ev := range events(t, log) {
		switch p := ev.Payload.(type) {
		case agent.SkillActivated:
			acts[p.Skill]++
		case agent.SkillRefused:
			refs[p.Skill]++
		case agent.SkillUnloaded:
			unloads[p.Skill]++
		case agent.TaskCompleted:
			outcome = analytics.OutcomeCompleted
		case agent.TaskFailed:
			outcome = analytics.OutcomeFailed
		}
	}
	for _, r := range rows {
		if r.Activations != acts[r.Name] || r.Refusals != refs[r.Name] || r.Unloads != unloads[r.Name] || r.Outcome != outcome {
			t.Errorf("%s: %d activations, %d refusals, %d unloads, %s; the log has %d, %d, %d, %s",
				r.Name, r.Activations, r.Refusals, r.Unloads, r.Outcome, acts[r.Name], refs[r.Name], unloads[r.Name], outcome)
		}
		if (r.Activations > 0) != (r.FirstIteration >= 0) {
			t.Errorf("%s: %d activations, first at iteration %d", r.Name, r.Activations, r.FirstIteration)
		}
	}
}

// TestExtractRun: a run offers its skills in a whole catalog, hides a
// user-only skill and withholds one by policy; the model activates one at
// its first call and the user another with "/name", before any call.
func TestExtractRun(t *testing.T) {
	s := newSkills()
	s.add(t, "alpha", "Use alpha for A.", 20)
	s.add(t, "gamma", "Use gamma for G.", 20, "scripts/g.sh")
	s.add(t, "delta", "Use delta for D.", 20)
	s.add(t, "omega", "Use omega for O.", 20)
	s.list[2].NoModelInvocation = true
	s.list[3].Withheld = "no community skills"
	m := &turns{answer: func(n int, _ *model.Request) *model.Response {
		switch n {
		case 1:
			return activate("alpha")
		case 2:
			return activate("alpha") // already active: not activated again
		}
		return answer("done")
	}}
	log := run(t, agent.Config{Model: m, Window: 100000}, s, agent.Task{ID: "t", Input: "/delta please"})
	rows := analytics.Extract(s.list, entries(log))
	checkAgainstLog(t, log, rows)
	want := []analytics.TaskSkill{
		{SkillID: "id-alpha", Name: "alpha", Version: 1, Digest: s.list[0].Digest, Offer: analytics.OfferFull, Activations: 1, FirstIteration: 1, Outcome: analytics.OutcomeCompleted},
		{SkillID: "id-gamma", Name: "gamma", Version: 2, Digest: s.list[1].Digest, Offer: analytics.OfferFull, FirstIteration: -1, Outcome: analytics.OutcomeCompleted},
		{SkillID: "id-delta", Name: "delta", Version: 3, Digest: s.list[2].Digest, Offer: analytics.OfferHidden, Activations: 1, FirstIteration: 0, Outcome: analytics.OutcomeCompleted},
		{SkillID: "id-omega", Name: "omega", Version: 4, Digest: s.list[3].Digest, Offer: analytics.OfferWithheld, WithheldRule: "no community skills", FirstIteration: -1, Outcome: analytics.OutcomeCompleted},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows:\n%+v\nwant\n%+v", rows, want)
	}
}

// TestExtractShortenedCatalog runs tasks in ever smaller windows, so the
// runtime shortens its catalog level by level, and holds each skill's
// offer to what the run's catalog.trimmed event says of it.
func TestExtractShortenedCatalog(t *testing.T) {
	s := newSkills()
	for i := range 30 {
		desc := strings.Repeat("Handles a particular kind of job. ", 1+i%8) // 34 to 272 characters
		var extra []string
		if i%3 == 0 {
			extra = []string{"scripts/run.sh", "reference.md"}
		}
		s.add(t, fmt.Sprintf("skill-%02d", i), strings.TrimSpace(desc), 5, extra...)
	}
	levels := map[string]bool{}
	for _, window := range []int{400000, 150000, 100000, 60000, 40000, 25000, 16000} {
		m := &turns{answer: func(int, *model.Request) *model.Response { return answer("ok") }}
		log := run(t, agent.Config{Model: m, Window: window}, s, agent.Task{ID: "t", Input: "x"})
		rows := analytics.Extract(s.list, entries(log))
		checkAgainstLog(t, log, rows)
		var short *agent.CatalogShortened
		for _, ev := range events(t, log) {
			if p, ok := ev.Payload.(agent.CatalogShortened); ok {
				short = &p
			}
		}
		level := "full"
		if short != nil {
			level = short.Level
		}
		levels[level] = true
		for _, r := range rows {
			want := analytics.OfferFull
			switch {
			case level == "names only":
				want = analytics.OfferNameOnly
			case short != nil && slices.Contains(short.Skills, r.Name):
				want = analytics.OfferShortened
			}
			if r.Offer != want {
				t.Errorf("window %d (%s): %s offered %s, want %s", window, level, r.Name, r.Offer, want)
			}
		}
	}
	if len(levels) < 4 {
		t.Errorf("the windows reached the levels %v only", levels)
	}
}

// TestExtractRefusalsAndUnloads: an activation over the skills budget is
// refused, its reason counted with its numbers as N; context placement
// unloads the least recently used skill.
func TestExtractRefusalsAndUnloads(t *testing.T) {
	s := newSkills()
	for _, n := range []string{"mid-one", "mid-two", "mid-three"} {
		s.add(t, n, "A large skill.", 900*4/5)
	}
	m := &turns{answer: func(n int, _ *model.Request) *model.Response {
		if n == 1 {
			return activate("mid-one", "mid-two", "mid-three")
		}
		return answer("ok")
	}}
	log := run(t, agent.Config{Model: m, Window: 10000, SkillsShare: 0.2}, s, agent.Task{ID: "t", Input: "x"})
	rows := byName(analytics.Extract(s.list, entries(log)))
	checkAgainstLog(t, log, analytics.Extract(s.list, entries(log)))
	reason := "it needs N tokens and only N of the N-token skills budget are left"
	if r := rows["mid-three"]; r.Refusals != 1 || !reflect.DeepEqual(r.RefusalReasons, map[string]int{reason: 1}) || r.Activations != 0 {
		t.Errorf("mid-three: %+v", r)
	}

	c := newSkills()
	c.add(t, "first", "The first skill.", 20)
	c.add(t, "second", "The second skill.", 20)
	m = &turns{answer: func(n int, _ *model.Request) *model.Response {
		switch n {
		case 1:
			return activate("first")
		case 2:
			return activate("second")
		}
		return answer("ok")
	}}
	log = run(t, agent.Config{Model: m, Window: 20000, Placement: agent.PlacementContext, MaxLoaded: 1}, c, agent.Task{ID: "t", Input: "x"})
	got := analytics.Extract(c.list, entries(log))
	checkAgainstLog(t, log, got)
	if rows := byName(got); rows["first"].Unloads != 1 || rows["first"].FirstIteration != 1 || rows["second"].FirstIteration != 2 || rows["second"].Unloads != 0 {
		t.Errorf("context placement: %+v", got)
	}
}

// resumable is a run whose tasks the resume test stops and resumes: an
// activation at the first call, a tool, a second activation later.
func resumable(t *testing.T) (*skills, func() agent.Config) {
	s := newSkills()
	s.add(t, "alpha", "Use alpha for A.", 20)
	s.add(t, "beta", "Use beta for B.", 20)
	s.add(t, "unused", "Never used.", 20)
	cfg := func() agent.Config {
		m := &turns{answer: func(n int, _ *model.Request) *model.Response {
			switch n {
			case 1:
				return activate("alpha")
			case 2:
				return &model.Response{Message: model.Message{ToolCalls: []model.ToolCall{model.Call("emit", map[string]int{"n": 50})}}}
			case 3:
				return activate("beta")
			}
			return answer("done")
		}}
		tl := emitTool(t)
		tl.Idempotent = true
		return agent.Config{Model: m, Window: 100000, Tools: []*tool.Tool{tl}}
	}
	return s, cfg
}

// TestExtractResumed stops a task after every entry of its log and
// resumes it: the resumed log (replayed entries not written again, a
// task.resumed marker added) gives exactly the rows of the run that was
// never stopped.
func TestExtractResumed(t *testing.T) {
	s, cfg := resumable(t)
	task := agent.Task{ID: "t", Input: "do it"}
	full := run(t, cfg(), s, task)
	want := analytics.Extract(s.list, entries(full))
	checkAgainstLog(t, full, want)
	if r := byName(want); r["alpha"].FirstIteration != 1 || r["beta"].FirstIteration != 3 || r["unused"].Activations != 0 {
		t.Fatalf("uninterrupted run: %+v", want)
	}
	for k := 1; k < len(full); k++ {
		resumed := task
		resumed.Resume = full[:k]
		log := run(t, cfg(), s, resumed)
		if markers := countType(t, log, agent.EventTaskResumed); markers != 1 {
			t.Fatalf("resumed after entry %d: %d task.resumed markers", k, markers)
		}
		if got := analytics.Extract(s.list, entries(log)); !reflect.DeepEqual(got, want) {
			t.Errorf("resumed after entry %d of %d:\n%+v\nwant\n%+v", k, len(full), got, want)
		}
	}
}

// TestExtractCompacted: compactions replace the transcript's older
// messages, not the log's entries: an activation before them counts once,
// at its iteration.
func TestExtractCompacted(t *testing.T) {
	s := newSkills()
	s.add(t, "guide", "Guides the long job.", 150)
	s.add(t, "spare", "Not needed.", 20)
	m := &turns{answer: func(n int, _ *model.Request) *model.Response {
		switch {
		case n == 1:
			return activate("guide")
		case n < 30:
			return &model.Response{Message: model.Message{ToolCalls: []model.ToolCall{model.Call("emit", map[string]int{"n": 600})}}}
		}
		return answer("finished")
	}}
	log := run(t, agent.Config{Model: m, Window: 4000, Tools: []*tool.Tool{emitTool(t)}}, s, agent.Task{ID: "t", Input: "Start the long job."})
	if n := countType(t, log, agent.EventContextCompacted); n == 0 {
		t.Fatal("the task was never compacted")
	}
	rows := analytics.Extract(s.list, entries(log))
	checkAgainstLog(t, log, rows)
	if r := byName(rows); r["guide"].Activations != 1 || r["guide"].FirstIteration != 1 || r["guide"].Outcome != analytics.OutcomeCompleted {
		t.Errorf("compacted task: %+v", rows)
	}
}

// TestExtractListedAndSearched: when the catalog lists only some names,
// the others are unlisted; searches count the skills their results name.
// A log's later run (a task run again) decides the offer and outcome.
func TestExtractListedAndSearched(t *testing.T) {
	s := newSkills()
	s.add(t, "listed", "Listed.", 5)
	s.add(t, "left-out", "Left out.", 5)
	var log []*skilld.TaskLogEntry
	add := func(payload string) {
		log = append(log, &skilld.TaskLogEntry{Seq: int64(len(log) + 1), Kind: agent.KindEvent, Payload: json.RawMessage(payload)})
	}
	event := func(p agent.Payload) {
		b, err := json.Marshal(agent.Event{Payload: p})
		if err != nil {
			t.Fatal(err)
		}
		add(string(b))
	}
	event(agent.TaskStarted{})
	event(agent.TaskFailed{Error: "stopped", Code: skilld.TaskCancelledCode})
	event(agent.TaskStarted{})
	event(agent.CatalogShortened{Level: "some names", Listed: []string{"listed"}, Unlisted: 1})
	add(`{"type":"skills.searched","query_chars":5,"results":["left-out","other"]}`)
	event(agent.LLMCallStarted{Iteration: 1})
	event(agent.SkillActivated{Skill: "left-out"})
	event(agent.TaskCompleted{})
	rows := byName(analytics.Extract(s.list, log))
	if r := rows["listed"]; r.Offer != analytics.OfferNameOnly || r.Found != 0 || r.Outcome != analytics.OutcomeCompleted {
		t.Errorf("listed: %+v", r)
	}
	if r := rows["left-out"]; r.Offer != analytics.OfferUnlisted || r.Found != 1 || r.Activations != 1 || r.FirstIteration != 1 {
		t.Errorf("left out: %+v", r)
	}
}

func TestReasonKind(t *testing.T) {
	for in, want := range map[string]string{
		"it needs 1200 tokens and only 300 of the 3000-token skills budget are left": "it needs N tokens and only N of the N-token skills budget are left",
		"  no numbers  ":          "no numbers",
		strings.Repeat("7", 500):  "N",
		strings.Repeat("ab", 200): strings.Repeat("ab", 100),
	} {
		if got := analytics.ReasonKind(in); got != want {
			t.Errorf("ReasonKind(%.40q) = %q, want %q", in, got, want)
		}
	}
}

func countType(t *testing.T, log []agent.LogEntry, typ string) int {
	n := 0
	for _, ev := range events(t, log) {
		if ev.Type == typ {
			n++
		}
	}
	return n
}
