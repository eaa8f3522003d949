package agent_test

import (
	"context"
	"fmt"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
)

// A Go skill with a tool and per-load state, in context placement: the
// tool changes the state, and the next request's <current_context> shows
// it.
func ExampleGoSkill() {
	greet, _ := tool.New("greeter_set", "Set the greeting.", func(ctx context.Context, p struct {
		Greeting string `json:"greeting"`
	}) (string, error) {
		agent.SkillContextOf(ctx).State = p.Greeting
		return "set", nil
	})
	skill := &agent.GoSkill{
		Name: "greeter", Description: "Greets people.",
		Init:   func() any { return "Hello" },
		Render: func(c *agent.SkillContext) []string { return []string{"Greet with: " + c.State.(string)} },
		Tools:  []*tool.Tool{greet},
	}
	m := model.NewScripted(
		model.Reply("", model.Call(agent.ActivateSkill, map[string]string{"skill_name": "greeter"})),
		model.Reply("", model.Call("greeter_set", map[string]string{"greeting": "Good morning"})),
		model.Step{Func: func(req *model.Request) (*model.Response, error) {
			fmt.Println(req.System[len(req.System)-80:])
			return &model.Response{Message: model.Message{Content: "Good morning, Ada."}}, nil
		}},
	)
	a, _ := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, GoSkills: []*agent.GoSkill{skill}, Placement: agent.PlacementContext})
	for ev := range a.Run(context.Background(), agent.Task{ID: "t", Input: "Greet Ada."}) {
		if done, ok := ev.Payload.(agent.TaskCompleted); ok {
			fmt.Println(done.Output)
		}
	}
	// Output:
	// with: Good morning
	//
	// Its tools: greeter_set.
	// </skill_content>
	// </current_context>
	// Good morning, Ada.
}
