package service_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// TestUpdateAgentMergePatch: agents.update merges its config as a JSON
// document: a member left out stays, one set to its zero value is set, a
// null one goes back to the default.
func TestUpdateAgentMergePatch(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		e := newEnv(t, open, service.Config{}, nil)
		ctx := t.Context()
		off := false
		must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "analyst", Config: skilld.AgentConfig{
			Model: "openai:gpt-4o-mini", Instruction: "Be brief.",
			Context: skilld.ContextSettings{Window: 64000, MaxMessages: 40, Compaction: &off, EntryShare: 0.2},
		}}))
		id := "analyst"
		patch := func(doc string) (*skilld.Agent, error) {
			return e.svc.UpdateAgent(ctx, e.member, service.UpdateAgentParams{AgentRef: service.AgentRef{ID: id}, Config: json.RawMessage(doc)})
		}
		ag := must[*skilld.Agent](t)(patch(`{"context": {"max_messages": 0, "compaction": true}}`))
		c := ag.Config.Context
		if ag.Config.Model != "openai:gpt-4o-mini" || ag.Config.Instruction != "Be brief." || c.Window != 64000 || c.EntryShare != 0.2 {
			t.Errorf("members left out changed: %+v", ag.Config)
		}
		if c.MaxMessages != 0 || c.Compaction == nil || !*c.Compaction {
			t.Errorf("members set to 0 and true: %+v", c)
		}
		ag = must[*skilld.Agent](t)(patch(`{"context": {"compaction": null, "window": null}, "model": "anthropic:claude-sonnet-4"}`))
		if c := ag.Config.Context; c.Compaction != nil || c.Window != 0 || c.EntryShare != 0.2 || ag.Config.Model != "anthropic:claude-sonnet-4" {
			t.Errorf("after removing compaction and window: %+v", ag.Config)
		}
		// Without a config nothing of it changes.
		renamed := "analyst-2"
		ag = must[*skilld.Agent](t)(e.svc.UpdateAgent(ctx, e.member, service.UpdateAgentParams{AgentRef: service.AgentRef{ID: "analyst"}, Name: &renamed}))
		if ag.Name != renamed || ag.Config.Model != "anthropic:claude-sonnet-4" || ag.Config.Context.EntryShare != 0.2 {
			t.Errorf("renamed: %+v", ag)
		}
		id = renamed
		_, err := patch(`{"context": {"entry_share": 2}}`)
		wantCode(t, err, skilld.EINVALID)
		_, err = patch(`{"context": `)
		wantCode(t, err, skilld.EINVALID)
		if got := must[*skilld.Agent](t)(e.svc.GetAgent(ctx, e.member, service.GetAgentParams{AgentRef: service.AgentRef{ID: renamed}})); got.Config.Context.EntryShare != 0.2 {
			t.Errorf("a refused patch changed the agent: %+v", got.Config)
		}
	})
}

// TestUpdateAgentConcurrentPatches: patches of different members sent at
// once all take effect; none is lost to another's read-modify-write.
func TestUpdateAgentConcurrentPatches(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		e := newEnv(t, open, service.Config{}, nil)
		must[*skilld.Agent](t)(e.svc.CreateAgent(t.Context(), e.member, service.AgentParams{Name: "shared", Config: skilld.AgentConfig{Model: "openai:gpt-4o"}}))
		const writers = 8
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := range writers {
			wg.Go(func() {
				doc := fmt.Sprintf(`{"sandbox": {"env": {"V%d": "x"}}}`, i)
				if _, err := e.svc.UpdateAgent(t.Context(), e.member, service.UpdateAgentParams{AgentRef: service.AgentRef{ID: "shared"}, Config: json.RawMessage(doc)}); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			// A writer is refused only when another's change went in
			// since it read the config: at most seven times here.
			t.Errorf("a concurrent patch: %v", err)
		}
		ag := must[*skilld.Agent](t)(e.svc.GetAgent(t.Context(), e.member, service.GetAgentParams{AgentRef: service.AgentRef{ID: "shared"}}))
		if len(ag.Config.Sandbox.Env) != writers || ag.Config.Model != "openai:gpt-4o" {
			t.Errorf("after %d concurrent patches: %+v", writers, ag.Config)
		}
	})
}

// TestAgentNotFoundMessage: the message names the workspace searched.
func TestAgentNotFoundMessage(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{}, nil)
	_, err := e.svc.GetAgent(t.Context(), e.member, service.GetAgentParams{AgentRef: service.AgentRef{ID: "analyst"}})
	if wantCode(t, err, skilld.ENOTFOUND); skilld.ErrorMessage(err) != `agent "analyst" not found in workspace "team"` {
		t.Errorf("message %q", skilld.ErrorMessage(err))
	}
	_, err = e.svc.RunTask(t.Context(), e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: "analyst"}, Input: "x"})
	if wantCode(t, err, skilld.ENOTFOUND); skilld.ErrorMessage(err) != `agent "analyst" not found in workspace "team"` {
		t.Errorf("message %q", skilld.ErrorMessage(err))
	}
}
