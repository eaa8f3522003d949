package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
)

// envSandbox installs dependencies the way a real provider reports them:
// it calls progress once per line, then (unless during stops it) says the
// environment is ready.
type envSandbox struct {
	sandbox.Sandbox
	lines  []string
	during func(i int) // after the i-th progress report
}

func (s envSandbox) Environment(ctx context.Context, dir string, pkg *pack.Package, progress func(sandbox.EnvironmentProgress)) (*sandbox.Environment, error) {
	for i, l := range s.lines {
		progress(sandbox.EnvironmentProgress{Elapsed: time.Duration(i+1) * time.Second, Line: l, Lines: i + 1})
		if s.during != nil {
			s.during(i)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return &sandbox.Environment{Kinds: []string{"python"}, Key: "k"}, nil
}

// TestEnvironmentProgress: an install's progress is a building event per
// report between preparing and ready; a task stopped mid-install resumes
// over its log although the resumed install reports a different number
// of times (progress is not replayed), and goes on to the end.
func TestEnvironmentProgress(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	p, err := pack.New([]pack.File{
		{Path: "SKILL.md", Data: []byte("---\nname: with-deps\ndescription: Uses a library.\n---\nRun it.\n")},
		{Path: "requirements.txt", Data: []byte("probe-pkg==1.0\n")},
	}, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sk := skillFromPackage(t, pkgs, p, "s1")
	steps := func() *model.Scripted {
		return script(t, do(agent.ActivateSkill, map[string]string{"skill_name": "with-deps"}), func(t *testing.T, req *model.Request) *model.Response {
			if last := req.Messages[len(req.Messages)-1]; last.IsError || strings.Contains(last.Content, "could not be installed") {
				t.Errorf("the activation's result: %+v", last)
			}
			return &model.Response{Message: model.Message{Content: "done"}}
		})
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	log := &agent.MemoryLog{}
	first := envSandbox{Sandbox: newSandbox(t), lines: []string{"Collecting probe-pkg==1.0", "Downloading probe_pkg-1.0.whl", "never seen"},
		during: func(i int) {
			if i == 1 {
				cancel(agent.ErrSuspended) // the server stops mid-install
			}
		}}
	a, err := agent.New(agent.Config{Model: steps(), Window: 100000, Tokenizer: runeCounter{}, Skills: []agent.Skill{sk}, Packages: pkgs, Sandbox: first, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	var live []agent.SkillEnvironment
	for ev, err := range a.Run(ctx, agent.Task{ID: "t", Input: "go"}) {
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := ev.Payload.(agent.SkillEnvironment); ok {
			live = append(live, e)
		}
	}
	if got := envStates(live); got != "preparing building building" || live[2].Line != "Downloading probe_pkg-1.0.whl" || live[2].Lines != 2 || live[2].ElapsedMS != 2000 {
		t.Fatalf("events of the stopped run: %s %+v", got, live)
	}

	second := envSandbox{Sandbox: newSandbox(t), lines: []string{"Using cached probe-pkg"}}
	b, err := agent.New(agent.Config{Model: steps(), Window: 100000, Tokenizer: runeCounter{}, Skills: []agent.Skill{sk}, Packages: pkgs, Sandbox: second, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ev := collect(t, b, agent.Task{ID: "t", Input: "go", Resume: log.Entries()})
	if len(ofType(ev, agent.EventTaskCompleted)) != 1 {
		t.Fatalf("the resumed run: %v", types(ev))
	}
	var logged []agent.SkillEnvironment
	for _, e := range log.Entries() {
		var x agent.Event
		if e.Kind == agent.KindEvent && x.UnmarshalJSON(e.Payload) == nil {
			if p, ok := x.Payload.(agent.SkillEnvironment); ok {
				logged = append(logged, p)
			}
		}
	}
	if got := envStates(logged); got != "preparing building building building ready" {
		t.Errorf("the log's skill.environment events: %s", got)
	}
	if got := envStates(payloads[agent.SkillEnvironment](ev)); got != "building ready" {
		t.Errorf("the resumed run delivered %s", got)
	}

	// A third run over the whole log replays it to the end: the progress
	// of both earlier runs is skipped, none is written.
	n := len(log.Entries())
	c, _ := agent.New(agent.Config{Model: model.NewScripted(), Window: 100000, Tokenizer: runeCounter{}, Skills: []agent.Skill{sk}, Packages: pkgs,
		Sandbox: envSandbox{Sandbox: newSandbox(t), lines: []string{"a", "b", "c", "d"}}, Log: log})
	collect(t, c, agent.Task{ID: "t", Input: "go", Resume: log.Entries()})
	if len(log.Entries()) != n {
		t.Errorf("replaying a finished log wrote %d entries", len(log.Entries())-n)
	}
}

func envStates(evs []agent.SkillEnvironment) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.State)
	}
	return strings.Join(s, " ")
}
