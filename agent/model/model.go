// Package model is the provider-neutral interface between the agent runtime
// and language models, with skilld's own message types. Adapters for
// OpenAI-compatible Chat Completions and Anthropic Messages live in
// subpackages and keep their SDKs' types to themselves; Scripted is a model
// for tests and demos.
package model

import (
	"context"
	"encoding/json"
	"iter"
)

// Role says who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool messages carry a tool's result for the call with ToolCallID.
	RoleTool Role = "tool"
)

// Message is one message of a conversation. The system prompt is not a
// message: it is Request.System.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a tool message answers;
	// IsError marks a failed call.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec offers a tool to the model.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Schema is the JSON Schema of the arguments object.
	Schema json.RawMessage `json:"schema"`
}

// Request is one model call.
type Request struct {
	// Model is the provider's model name ("gpt-4o-mini").
	Model    string
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens caps the response (0: the adapter's default).
	MaxTokens   int
	Temperature *float64
}

// Usage is what the provider reports the call cost.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Stop reasons.
const (
	StopEnd       = "end"        // the model finished its turn
	StopToolCalls = "tool_calls" // the model wants tools run
	StopLength    = "length"     // the response hit MaxTokens
)

// Response is a complete model answer.
type Response struct {
	Message    Message `json:"message"`
	Usage      Usage   `json:"usage"`
	StopReason string  `json:"stop_reason"`
}

// Chunk is one element of a streamed answer: text as it arrives, and at the
// end the complete Response (exactly one chunk has Response set, the last).
type Chunk struct {
	Text     string
	Response *Response
}

// Model generates answers.
type Model interface {
	// Generate streams the answer to req. The sequence ends after the chunk
	// carrying the Response, or with an error. Errors are *skilld.Error:
	// ERATELIMITED and EUNAVAILABLE after the adapter's retries, EINVALID for
	// requests the provider refuses, EUNAUTHORIZED for bad credentials.
	Generate(ctx context.Context, req *Request) iter.Seq2[*Chunk, error]
}

// Resumable is a Model that keeps its own place in a conversation, as
// Scripted does. When a stopped task resumes, the runtime replays the
// model's recorded answers instead of calling it, and then tells such a
// model how many calls the log already answered, so its next answer is
// the one the conversation is at.
type Resumable interface {
	Resume(answered int)
}

// Collect runs Generate and returns the final Response.
func Collect(ctx context.Context, m Model, req *Request) (*Response, error) {
	for c, err := range m.Generate(ctx, req) {
		if err != nil {
			return nil, err
		}
		if c.Response != nil {
			return c.Response, nil
		}
	}
	return nil, errNoResponse()
}
