package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/anthropic"
	"github.com/skilld/skilld/agent/model/internal/modeltest"
)

// newServer is an endpoint of this provider's API; see modeltest.Server.
func newServer(t *testing.T, replies ...func(w http.ResponseWriter)) *modeltest.Server {
	return modeltest.NewServer(t, "/v1/messages", replies...)
}

// sse writes events as the Messages API streams them: an event line, a data
// line, a blank line.
func sse(events ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("request-id", "req_011CTest")
		w.WriteHeader(http.StatusOK)
		for _, e := range events {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}
}

func ev(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

func start(inputTokens int) string {
	return ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`, inputTokens))
}

func textBlock(index int, parts ...string) string {
	s := ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index))
	for _, p := range parts {
		b, _ := json.Marshal(p)
		s += ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, index, b))
	}
	return s + ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

func toolBlock(index int, id, name string, parts ...string) string {
	s := ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, index, id, name))
	for _, p := range parts {
		b, _ := json.Marshal(p)
		s += ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, b))
	}
	return s + ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

func finish(reason string, outputTokens int) string {
	return ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, reason, outputTokens)) +
		ev("message_stop", `{"type":"message_stop"}`)
}

const ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n"

func status(code int, errType, msg string, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011CErr"}`, errType, msg)
	}
}

func newModel(t *testing.T, s *modeltest.Server, retries int) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New(anthropic.Config{BaseURL: s.URL, APIKey: "sk-ant-test-secret-key", Model: "claude-sonnet-4-5", MaxRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var weatherTool = model.ToolSpec{
	Name:        "get_weather",
	Description: "Weather for a city.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`),
}

func TestToolUseSplitAcrossDeltas(t *testing.T) {
	s := newServer(t, sse(
		start(472),
		textBlock(0, "Let me ", "check."),
		ping,
		toolBlock(1, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", "", `{"ci`, `ty": "San`, ` Francisco"}`),
		finish("tool_use", 89),
	))
	texts, resp, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{
		System:   "You are terse.",
		Messages: []model.Message{{Role: model.RoleUser, Content: "Weather in SF?"}},
		Tools:    []model.ToolSpec{weatherTool},
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(texts, "|") != "Let me |check." || resp.Message.Content != "Let me check." {
		t.Errorf("texts %q content %q", texts, resp.Message.Content)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 1 || calls[0].ID != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" || calls[0].Name != "get_weather" || string(calls[0].Arguments) != `{"city": "San Francisco"}` {
		t.Fatalf("calls %+v", calls)
	}
	if resp.StopReason != model.StopToolCalls || resp.Usage != (model.Usage{PromptTokens: 472, CompletionTokens: 89}) {
		t.Errorf("stop %q usage %+v", resp.StopReason, resp.Usage)
	}

	body := s.Body(0)
	if body["model"] != "claude-sonnet-4-5" || body["stream"] != true || body["max_tokens"] != 4096.0 {
		t.Errorf("model %v stream %v max_tokens %v", body["model"], body["stream"], body["max_tokens"])
	}
	if got, _ := json.Marshal(body["system"]); string(got) != `[{"text":"You are terse.","type":"text"}]` {
		t.Errorf("system %s", got)
	}
	if got, _ := json.Marshal(body["messages"]); string(got) != `[{"content":[{"text":"Weather in SF?","type":"text"}],"role":"user"}]` {
		t.Errorf("messages %s", got)
	}
	if got, _ := json.Marshal(body["tools"]); string(got) != `[{"description":"Weather for a city.","input_schema":{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"name":"get_weather"}]` {
		t.Errorf("tools %s", got)
	}
	h := s.Header(0)
	if h.Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}
	if h.Get("X-Api-Key") != "sk-ant-test-secret-key" && h.Get("Authorization") != "Bearer sk-ant-test-secret-key" {
		t.Errorf("the API key was not sent: %v", h)
	}
}

func TestTextAnswerWithCacheUsage(t *testing.T) {
	s := newServer(t, sse(
		ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":1}}}`),
		textBlock(0, "Hello", ", world", "!"),
		finish("end_turn", 12),
	))
	texts, resp, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(texts, "|") != "Hello|, world|!" || resp.Message.Content != "Hello, world!" || resp.StopReason != model.StopEnd {
		t.Errorf("texts %q response %+v", texts, resp)
	}
	if resp.Usage != (model.Usage{PromptTokens: 3210, CompletionTokens: 12}) {
		t.Errorf("usage %+v: the prompt is input + cache writes + cache reads", resp.Usage)
	}
	if _, ok := s.Body(0)["system"]; ok {
		t.Error("system sent without Request.System")
	}
	if _, ok := s.Body(0)["tools"]; ok {
		t.Error("tools sent without Request.Tools")
	}
}

func TestMaxTokensStop(t *testing.T) {
	s := newServer(t, sse(start(5), textBlock(0, "Once upon"), finish("max_tokens", 2)))
	temp := 0.3
	_, resp, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{MaxTokens: 2, Temperature: &temp, Messages: []model.Message{{Role: model.RoleUser, Content: "story"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != model.StopLength {
		t.Errorf("stop %q", resp.StopReason)
	}
	if s.Body(0)["max_tokens"] != 2.0 || s.Body(0)["temperature"] != 0.3 {
		t.Errorf("max_tokens %v temperature %v", s.Body(0)["max_tokens"], s.Body(0)["temperature"])
	}
}

func TestMultipleToolUses(t *testing.T) {
	s := newServer(t, sse(
		start(100),
		toolBlock(0, "toolu_A", "get_weather", `{"city":`, `"Oslo"}`),
		toolBlock(1, "toolu_B", "get_weather", `{"city": "Ro`, `me"}`),
		finish("tool_use", 40),
	))
	texts, resp, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "Oslo and Rome"}}, Tools: []model.ToolSpec{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if len(texts) != 0 || len(calls) != 2 || calls[0].ID != "toolu_A" || string(calls[0].Arguments) != `{"city":"Oslo"}` ||
		calls[1].ID != "toolu_B" || string(calls[1].Arguments) != `{"city": "Rome"}` {
		t.Fatalf("texts %q calls %+v", texts, calls)
	}
}

// Tool results answering one assistant turn go back as one user message
// of tool_result blocks (is_error kept), followed in that same message by
// a user message that comes right after them.
func TestMergedToolResults(t *testing.T) {
	s := newServer(t, sse(start(1), textBlock(0, "ok"), finish("end_turn", 1)))
	_, _, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{
		Messages: []model.Message{
			{Role: model.RoleUser, Content: "Weather in Oslo and Rome?"},
			{Role: model.RoleAssistant, Content: "Checking.", ToolCalls: []model.ToolCall{
				{ID: "toolu_A", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
				{ID: "toolu_B", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)},
			}},
			{Role: model.RoleTool, ToolCallID: "toolu_A", ToolName: "get_weather", Content: "12C"},
			{Role: model.RoleTool, ToolCallID: "toolu_B", ToolName: "get_weather", Content: "service down", IsError: true},
			{Role: model.RoleUser, Content: "Also Paris?"},
			{Role: model.RoleAssistant, Content: ""},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "toolu_C", Name: "get_weather"}}},
			{Role: model.RoleTool, ToolCallID: "toolu_C", Content: "15C"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "toolu_D", Name: "shell", Arguments: json.RawMessage(`{"command":"true"}`)}}},
			{Role: model.RoleTool, ToolCallID: "toolu_D", Content: ""},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s.Body(0)["messages"])
	want := `[{"content":[{"text":"Weather in Oslo and Rome?","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"Checking.","type":"text"},` +
		`{"id":"toolu_A","input":{"city":"Oslo"},"name":"get_weather","type":"tool_use"},` +
		`{"id":"toolu_B","input":{"city":"Rome"},"name":"get_weather","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":[{"text":"12C","type":"text"}],"is_error":false,"tool_use_id":"toolu_A","type":"tool_result"},` +
		`{"content":[{"text":"service down","type":"text"}],"is_error":true,"tool_use_id":"toolu_B","type":"tool_result"},` +
		`{"text":"Also Paris?","type":"text"}],"role":"user"},` +
		`{"content":[{"id":"toolu_C","input":{},"name":"get_weather","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":[{"text":"15C","type":"text"}],"is_error":false,"tool_use_id":"toolu_C","type":"tool_result"}],"role":"user"},` +
		`{"content":[{"id":"toolu_D","input":{"command":"true"},"name":"shell","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"is_error":false,"tool_use_id":"toolu_D","type":"tool_result"}],"role":"user"}]`
	if string(got) != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

func TestNoAPIKey(t *testing.T) {
	s := newServer(t, sse(start(1), textBlock(0, "local"), finish("end_turn", 1)))
	m, err := anthropic.New(anthropic.Config{BaseURL: s.URL + "/v1", Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	if _, resp, err := modeltest.Stream(t, m, &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}); err != nil || resp.Message.Content != "local" {
		t.Fatalf("%v %+v", err, resp)
	}
	if h := s.Header(0); h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
		t.Errorf("credentials sent without a configured key: %v", h)
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "https://api.anthropic.com/",
		"https://api.anthropic.com":     "https://api.anthropic.com/",
		"https://api.anthropic.com/v1":  "https://api.anthropic.com/",
		"https://api.anthropic.com/v1/": "https://api.anthropic.com/",
		"http://proxy:8080/anthropic":   "http://proxy:8080/anthropic/",
		"http://proxy:8080/anthropic/":  "http://proxy:8080/anthropic/",
	} {
		if got, err := anthropic.BaseURL(in); err != nil || got != want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := anthropic.BaseURL("api.anthropic.com"); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("a URL without scheme: %v", err)
	}
}

func TestBadToolSchema(t *testing.T) {
	m, _ := anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1", Model: "m"})
	_, err := model.Collect(context.Background(), m, &model.Request{Tools: []model.ToolSpec{{Name: "x", Schema: json.RawMessage(`[1]`)}}})
	if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("err %v", err)
	}
}
