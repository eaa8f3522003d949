package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/internal/modeltest"
	"github.com/skilld/skilld/agent/model/openai"
)

// newServer is an endpoint of this provider's API; see modeltest.Server.
func newServer(t *testing.T, replies ...func(w http.ResponseWriter)) *modeltest.Server {
	return modeltest.NewServer(t, "/v1/chat/completions", replies...)
}

// sse writes data lines exactly as Chat Completions streams them, then
// [DONE].
func sse(lines ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, l := range lines {
			fmt.Fprintf(w, "data: %s\n\n", l)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func status(code int, body string, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// chunk is one chat.completion.chunk with the fields OpenAI sends.
func chunk(choices string, usage string) string {
	return `{"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1735689600,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":` + choices + `,"usage":` + usage + `}`
}

func delta(d string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `[{"index":0,"delta":` + d + `,"logprobs":null,"finish_reason":` + f + `}]`
}

const usageLast = `{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`

func newModel(t *testing.T, s *modeltest.Server, retries int) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{BaseURL: s.URL, APIKey: "sk-test-secret-key-123", Model: "gpt-4o-mini", MaxRetries: retries})
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

func TestToolCallSplitAcrossChunks(t *testing.T) {
	s := newServer(t, sse(
		chunk(delta(`{"role":"assistant","content":null,"refusal":null}`, ""), "null"),
		chunk(delta(`{"tool_calls":[{"index":0,"id":"call_Ab1","type":"function","function":{"name":"get_weather","arguments":""}}]}`, ""), "null"),
		chunk(delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}`, ""), "null"),
		chunk(delta(`{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Par"}}]}`, ""), "null"),
		chunk(delta(`{"tool_calls":[{"index":0,"function":{"arguments":"is\"}"}}]}`, ""), "null"),
		chunk(delta(`{}`, "tool_calls"), "null"),
		chunk(`[]`, usageLast),
	))
	m := newModel(t, s, 0)
	texts, resp, err := modeltest.Stream(t, m, &model.Request{
		System:   "You are terse.",
		Messages: []model.Message{{Role: model.RoleUser, Content: "Weather in Paris?"}},
		Tools:    []model.ToolSpec{weatherTool},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 0 {
		t.Errorf("text chunks %q, want none", texts)
	}
	want := model.ToolCall{ID: "call_Ab1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)}
	if len(resp.Message.ToolCalls) != 1 || !sameCall(resp.Message.ToolCalls[0], want) {
		t.Fatalf("tool calls %+v, want [%+v]", resp.Message.ToolCalls, want)
	}
	if resp.StopReason != model.StopToolCalls || resp.Message.Role != model.RoleAssistant {
		t.Errorf("stop %q role %q", resp.StopReason, resp.Message.Role)
	}
	if resp.Usage != (model.Usage{PromptTokens: 82, CompletionTokens: 17}) {
		t.Errorf("usage %+v", resp.Usage)
	}

	body := s.Body(0)
	if body["model"] != "gpt-4o-mini" || body["stream"] != true {
		t.Errorf("model %v stream %v", body["model"], body["stream"])
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v", body["stream_options"])
	}
	msgs := body["messages"].([]any)
	if first := msgs[0].(map[string]any); first["role"] != "system" || first["content"] != "You are terse." {
		t.Errorf("first message %v, want the system prompt", first)
	}
	if second := msgs[1].(map[string]any); second["role"] != "user" || second["content"] != "Weather in Paris?" {
		t.Errorf("second message %v", second)
	}
	tools := body["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if tools[0].(map[string]any)["type"] != "function" || fn["name"] != "get_weather" || fn["description"] != "Weather for a city." {
		t.Errorf("tool %v", tools[0])
	}
	if got, _ := json.Marshal(fn["parameters"]); string(got) != `{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}` {
		t.Errorf("parameters %s", got)
	}
	if h := s.Header(0).Get("Authorization"); h != "Bearer sk-test-secret-key-123" {
		t.Errorf("Authorization %q", h)
	}
	if _, ok := body["max_tokens"]; ok {
		t.Error("max_tokens sent without Request.MaxTokens")
	}
}

func sameCall(a, b model.ToolCall) bool {
	return a.ID == b.ID && a.Name == b.Name && string(a.Arguments) == string(b.Arguments)
}

func TestTextAnswer(t *testing.T) {
	s := newServer(t, sse(
		chunk(delta(`{"role":"assistant","content":"","refusal":null}`, ""), "null"),
		chunk(delta(`{"content":"Hello"}`, ""), "null"),
		chunk(delta(`{"content":", wor"}`, ""), "null"),
		chunk(delta(`{"content":"ld!"}`, ""), "null"),
		chunk(delta(`{}`, "stop"), "null"),
		chunk(`[]`, usageLast),
	))
	texts, resp, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(texts, "|") != "Hello|, wor|ld!" {
		t.Errorf("chunks %q", texts)
	}
	if resp.Message.Content != "Hello, world!" || resp.StopReason != model.StopEnd || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage.PromptTokens != 82 {
		t.Errorf("usage %+v", resp.Usage)
	}
	if _, ok := s.Body(0)["tools"]; ok {
		t.Error("tools sent without Request.Tools")
	}
	if msgs := s.Body(0)["messages"].([]any); len(msgs) != 1 {
		t.Errorf("messages %v: no system message expected", msgs)
	}
}

func TestLengthStop(t *testing.T) {
	s := newServer(t, sse(chunk(delta(`{"content":"Once upon"}`, "length"), "null"), chunk(`[]`, usageLast)))
	_, resp, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{MaxTokens: 2, Messages: []model.Message{{Role: model.RoleUser, Content: "story"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != model.StopLength {
		t.Errorf("stop %q", resp.StopReason)
	}
	// Not api.openai.com: the field every compatible server knows.
	if s.Body(0)["max_tokens"] != 2.0 || s.Body(0)["max_completion_tokens"] != nil {
		t.Errorf("max tokens fields: %v / %v", s.Body(0)["max_tokens"], s.Body(0)["max_completion_tokens"])
	}
}

func TestMultipleToolCallsInterleaved(t *testing.T) {
	s := newServer(t, sse(
		chunk(delta(`{"role":"assistant","content":"Checking both."}`, ""), "null"),
		chunk(delta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}`, ""), "null"),
		chunk(delta(`{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]}`, ""), "null"),
		chunk(delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Oslo\"}"}}]}`, ""), "null"),
		chunk(delta(`{"tool_calls":[{"index":1,"function":{"arguments":"\"Rome\"}"}}]}`, ""), "null"),
		chunk(delta(`{}`, "tool_calls"), "null"),
		chunk(`[]`, usageLast),
	))
	texts, resp, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "Oslo and Rome?"}}, Tools: []model.ToolSpec{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(texts, "") != "Checking both." || resp.Message.Content != "Checking both." {
		t.Errorf("text %q / %q", texts, resp.Message.Content)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 ||
		!sameCall(calls[0], model.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}) ||
		!sameCall(calls[1], model.ToolCall{ID: "call_2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}) {
		t.Fatalf("calls %+v", calls)
	}
}

// Some servers (llama.cpp, older Ollama) send the whole answer in one chunk,
// tool calls without an index, finish_reason "stop" and usage included.
func TestEverythingInOneChunk(t *testing.T) {
	s := newServer(t, sse(
		chunk(`[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[`+
			`{"id":"a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},`+
			`{"id":"b","type":"function","function":{"name":"read_file","arguments":{"path":"x"}}}]},"finish_reason":"stop"}]`,
			`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`),
	))
	_, resp, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "a" || calls[1].ID != "b" || string(calls[0].Arguments) != `{"city":"Oslo"}` || calls[1].Name != "read_file" {
		t.Fatalf("calls %+v", calls)
	}
	if resp.StopReason != model.StopToolCalls || resp.Usage != (model.Usage{PromptTokens: 10, CompletionTokens: 5}) {
		t.Errorf("stop %q usage %+v", resp.StopReason, resp.Usage)
	}
	// Arguments that were not a JSON string still end up valid JSON.
	if !json.Valid(calls[1].Arguments) {
		t.Errorf("arguments %q are not valid JSON", calls[1].Arguments)
	}
}

func TestBrokenArgumentsStayValidJSON(t *testing.T) {
	s := newServer(t, sse(
		chunk(delta(`{"tool_calls":[{"index":0,"function":{"name":"get_weather","arguments":"{\"city\": \"Os"}}]}`, "length"), "null"),
	))
	_, resp, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Message.ToolCalls[0]
	if c.ID != "call_0" || string(c.Arguments) != `"{\"city\": \"Os"` || resp.StopReason != model.StopLength {
		t.Errorf("call %+v (args %s) stop %q", c, c.Arguments, resp.StopReason)
	}
}

func TestConversationMapping(t *testing.T) {
	s := newServer(t, sse(chunk(delta(`{"content":"done"}`, "stop"), "null")))
	temp := 0.2
	_, _, err := modeltest.Stream(t, newModel(t, s, 0), &model.Request{
		Model:       "llama3.1:8b",
		Temperature: &temp,
		Messages: []model.Message{
			{Role: model.RoleUser, Content: "Weather in Oslo and Rome?"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
				{ID: "call_2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)},
			}},
			{Role: model.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: "12C"},
			{Role: model.RoleTool, ToolCallID: "call_2", ToolName: "get_weather", Content: "service down", IsError: true},
			{Role: model.RoleAssistant, Content: "Oslo is 12C."},
			{Role: model.RoleUser, Content: "thanks"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	body := s.Body(0)
	if body["model"] != "llama3.1:8b" || body["temperature"] != 0.2 {
		t.Errorf("model %v temperature %v", body["model"], body["temperature"])
	}
	got, _ := json.Marshal(body["messages"])
	want := `[{"content":"Weather in Oslo and Rome?","role":"user"},` +
		`{"role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Oslo\"}","name":"get_weather"},"id":"call_1","type":"function"},` +
		`{"function":{"arguments":"{\"city\":\"Rome\"}","name":"get_weather"},"id":"call_2","type":"function"}]},` +
		`{"content":"12C","role":"tool","tool_call_id":"call_1"},` +
		`{"content":"Error: service down","role":"tool","tool_call_id":"call_2"},` +
		`{"content":"Oslo is 12C.","role":"assistant"},` +
		`{"content":"thanks","role":"user"}]`
	if string(got) != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}
