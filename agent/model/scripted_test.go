package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/internal/modeltest"
)

func TestScriptedStepsInOrder(t *testing.T) {
	s := model.NewScripted(
		model.Reply("Let me look at the skill catalog first.", model.Call("activate_skill", map[string]string{"skill_name": "csv-inspector"})),
		model.Reply("The file has 3 rows."),
	)
	req := &model.Request{System: "sys", Messages: []model.Message{{Role: model.RoleUser, Content: "inspect data.csv"}}}
	texts, resp, err := modeltest.Stream(t, s, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) < 2 || strings.Join(texts, "") != "Let me look at the skill catalog first." {
		t.Errorf("chunks %q: want the text in a few chunks", texts)
	}
	want := model.ToolCall{ID: "call_1_1", Name: "activate_skill", Arguments: json.RawMessage(`{"skill_name":"csv-inspector"}`)}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].ID != want.ID || string(resp.Message.ToolCalls[0].Arguments) != string(want.Arguments) {
		t.Errorf("calls %+v", resp.Message.ToolCalls)
	}
	if resp.StopReason != model.StopToolCalls || resp.Message.Role != model.RoleAssistant {
		t.Errorf("stop %q role %q", resp.StopReason, resp.Message.Role)
	}

	// The runtime appends to and reuses its slices; the record must not move.
	req.Messages = append(req.Messages, resp.Message, model.Message{Role: model.RoleTool, ToolCallID: "call_1_1", Content: "<skill_content>"})
	req.Messages[0].Content = "changed"
	_, resp, err = modeltest.Stream(t, s, req)
	if err != nil || resp.Message.Content != "The file has 3 rows." || resp.StopReason != model.StopEnd {
		t.Fatalf("%v %+v", err, resp)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || len(reqs[0].Messages) != 1 || reqs[0].Messages[0].Content != "inspect data.csv" || len(reqs[1].Messages) != 3 {
		t.Errorf("recorded requests %+v", reqs)
	}

	_, _, err = modeltest.Stream(t, s, req)
	if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), "2 steps") || !strings.Contains(err.Error(), "request 3") {
		t.Errorf("after the script: %v", err)
	}
	if s.Remaining() != 0 {
		t.Errorf("remaining %d", s.Remaining())
	}
}

func TestScriptedFuncSteps(t *testing.T) {
	limited := skilld.Errorf(skilld.ERATELIMITED, "rate limited (HTTP 429)")
	s := model.NewScripted(
		model.Step{Func: func(r *model.Request) (*model.Response, error) {
			if len(r.Tools) != 1 || r.Tools[0].Name != "activate_skill" {
				return nil, errors.New("activate_skill not offered")
			}
			return &model.Response{Message: model.Message{Content: "ok"}, Usage: model.Usage{PromptTokens: 7}}, nil
		}},
		model.Step{Func: func(*model.Request) (*model.Response, error) { return nil, limited }},
		model.Step{Func: func(*model.Request) (*model.Response, error) { return nil, errors.New("boom") }},
	)
	_, resp, err := modeltest.Stream(t, s, &model.Request{Tools: []model.ToolSpec{{Name: "activate_skill"}}})
	if err != nil || resp.Message.Content != "ok" || resp.Usage.PromptTokens != 7 || resp.Message.Role != model.RoleAssistant {
		t.Fatalf("%v %+v", err, resp)
	}
	if _, _, err := modeltest.Stream(t, s, &model.Request{}); err != limited {
		t.Errorf("a step's *skilld.Error must pass through unchanged: %v", err)
	}
	if _, _, err := modeltest.Stream(t, s, &model.Request{}); skilld.ErrorCode(err) != skilld.EINTERNAL || !strings.Contains(err.Error(), "step 3: boom") {
		t.Errorf("plain error: %v", err)
	}
}

func TestScriptedConcurrent(t *testing.T) {
	const n = 50
	steps := make([]model.Step, n)
	for i := range steps {
		steps[i] = model.Reply("answer number " + strings.Repeat("x", i))
	}
	s := model.NewScripted(steps...)
	var wg sync.WaitGroup
	seen := make(chan string, n)
	for range n {
		wg.Go(func() {
			resp, err := model.Collect(context.Background(), s, &model.Request{})
			if err != nil {
				t.Error(err)
				return
			}
			seen <- resp.Message.Content
		})
	}
	wg.Wait()
	close(seen)
	distinct := map[string]bool{}
	for c := range seen {
		distinct[c] = true
	}
	if len(distinct) != n || len(s.Requests()) != n {
		t.Errorf("%d distinct answers, %d requests; want %d each", len(distinct), len(s.Requests()), n)
	}
}

func TestScriptedCanceled(t *testing.T) {
	s := model.NewScripted(model.Reply("hi"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := model.Collect(ctx, s, &model.Request{})
	if !errors.Is(err, context.Canceled) || skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
		t.Errorf("err %v", err)
	}
}

func TestScriptedStopEarly(t *testing.T) {
	s := model.NewScripted(model.Reply("one two three four five six"), model.Reply("next"))
	for range s.Generate(context.Background(), &model.Request{}) {
		break
	}
	if resp, err := model.Collect(context.Background(), s, &model.Request{}); err != nil || resp.Message.Content != "next" {
		t.Errorf("%v %+v", err, resp)
	}
}

func TestLoadScript(t *testing.T) {
	s, err := model.LoadScript(strings.NewReader(`[
		{"text": "I'll activate the skill.", "tool_calls": [{"name": "activate_skill", "arguments": {"skill_name": "csv-inspector"}}]},
		{"tool_calls": [{"id": "c2", "name": "shell", "arguments": {"command": "python3 skills/x/inspect.py data.csv", "timeout_s": 30}}, {"name": "read_file"}]},
		{"text": "Done.", "usage": {"prompt_tokens": 120, "completion_tokens": 3}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := model.Collect(context.Background(), s, &model.Request{})
	r2, _ := model.Collect(context.Background(), s, &model.Request{})
	r3, _ := model.Collect(context.Background(), s, &model.Request{})
	if r1.Message.ToolCalls[0].Name != "activate_skill" || string(r1.Message.ToolCalls[0].Arguments) != `{"skill_name":"csv-inspector"}` || r1.StopReason != model.StopToolCalls {
		t.Errorf("step 1 %+v", r1)
	}
	if c := r2.Message.ToolCalls; len(c) != 2 || c[0].ID != "c2" || c[1].ID != "call_2_2" || string(c[1].Arguments) != `{}` || r2.Message.Content != "" {
		t.Errorf("step 2 %+v", r2)
	}
	if r3.Message.Content != "Done." || r3.StopReason != model.StopEnd || r3.Usage.PromptTokens != 120 {
		t.Errorf("step 3 %+v", r3)
	}

	for script, want := range map[string]string{
		`[{"txt": "typo"}]`:                     `unknown field "txt"`,
		`[{"tool_calls": [{"arguments": {}}]}]`: "step 1: tool call 1 has no name",
		`[{"text": "a"}, {"tool_calls": [{"name": "shell", "arguments": "ls"}]}]`: "step 2: tool call 1 (shell): arguments must be a JSON object",
		`[]`:                                     "no steps",
		`{"text": "x"}`:                          "cannot unmarshal",
		`[{"text": "a"}] [{"text": "b"}]`:        "data after",
		`[{"text": "a", "stop_reason": "done"}]`: `stop_reason "done"`,
	} {
		_, err := model.LoadScript(strings.NewReader(script))
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadScript(%s) = %v, want EINVALID containing %q", script, err, want)
		}
	}
}
