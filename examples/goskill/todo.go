// Command goskill runs an agent with a skill written in Go: a to-do list
// whose items live in the skill's per-load state and whose count of done
// items lives in the agent store, so it survives the skill being unloaded.
// A scripted model drives it, so it needs no API key:
//
//	go run ./examples/goskill
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/agent/tool"
)

// todoSkill is the Go skill.
func todoSkill() (*agent.GoSkill, error) {
	add, err := tool.New("todo_add", "Add an item to the to-do list.", func(ctx context.Context, p struct {
		Item string `json:"item" jsonschema:"what to do"`
	}) (string, error) {
		c := agent.SkillContextOf(ctx)
		c.State = append(c.State.([]string), p.Item)
		return fmt.Sprintf("added %q; %d items", p.Item, len(c.State.([]string))), nil
	})
	if err != nil {
		return nil, err
	}
	done, err := tool.New("todo_done", "Mark the first item done.", func(ctx context.Context, _ struct{}) (string, error) {
		c := agent.SkillContextOf(ctx)
		items := c.State.([]string)
		if len(items) == 0 {
			return "", fmt.Errorf("the list is empty")
		}
		c.State = items[1:]
		n, _, err := agent.StoreGet[int](c.Store, "done")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("done: %s", items[0]), agent.StoreSet(ctx, c.Store, "done", n+1)
	})
	if err != nil {
		return nil, err
	}
	return &agent.GoSkill{
		Name:        "todo",
		Description: "Keep a to-do list while working: add items, mark them done.",
		Init:        func() any { return []string{} },
		Render: func(c *agent.SkillContext) []string {
			n, _, _ := agent.StoreGet[int](c.Store, "done")
			items := c.State.([]string)
			list := "(empty)"
			if len(items) > 0 {
				list = "- " + strings.Join(items, "\n- ")
			}
			return []string{"Keep the to-do list current with todo_add and todo_done.", fmt.Sprintf("To do:\n%s\nDone so far: %d", list, n)}
		},
		Tools:        []*tool.Tool{add, done},
		AllowedTools: []string{"todo_add", "todo_done"},
	}, nil
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "goskill:", err)
		os.Exit(1)
	}
}

func run(w *os.File) error {
	skill, err := todoSkill()
	if err != nil {
		return err
	}
	counter, err := tokenizer.ForModel("openai:gpt-4o", "")
	if err != nil {
		return err
	}
	m := model.NewScripted(
		model.Reply("", model.Call(agent.ActivateSkill, map[string]string{"skill_name": "todo"})),
		model.Reply("", model.Call("todo_add", map[string]string{"item": "write the report"}), model.Call("todo_add", map[string]string{"item": "send it"})),
		model.Reply("", model.Call("todo_done", struct{}{})),
		model.Reply("One item done, one to go: send the report."),
	)
	a, err := agent.New(agent.Config{Model: m, Window: 128000, Tokenizer: counter, GoSkills: []*agent.GoSkill{skill}, Placement: agent.PlacementContext})
	if err != nil {
		return err
	}
	for ev, err := range a.Run(context.Background(), agent.Task{ID: "demo", Input: "Plan and start the report."}) {
		if err != nil {
			return err
		}
		switch p := ev.Payload.(type) {
		case agent.ContextChanged:
			fmt.Fprintf(w, "context: loaded %v\n", p.Skills)
		case agent.Message:
			if p.Role == model.RoleTool {
				fmt.Fprintf(w, "tool: %s\n", p.Content)
			}
		case agent.TaskCompleted:
			fmt.Fprintf(w, "answer: %s\n", p.Output)
		}
	}
	return nil
}
