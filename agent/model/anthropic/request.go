package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/internal/adapt"
)

// params maps a model.Request to the SDK's request and the per-call options
// for what the SDK's params do not carry.
func (m *Model) params(req *model.Request) (ant.MessageNewParams, []option.RequestOption, error) {
	name, err := adapt.ModelName(provider, req.Model, m.model)
	if err != nil {
		return ant.MessageNewParams{}, nil, err
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.maxTokens
	}
	p := ant.MessageNewParams{Model: name, MaxTokens: int64(maxTokens)}
	if req.System != "" {
		p.System = []ant.TextBlockParam{{Text: req.System}}
	}
	p.Messages, err = messages(req.Messages)
	if err != nil {
		return p, nil, err
	}
	for _, spec := range req.Tools {
		schema, err := adapt.Schema(spec)
		if err != nil {
			return p, nil, err
		}
		tool := ant.ToolParam{Name: spec.Name, InputSchema: inputSchema(schema)}
		if spec.Description != "" {
			tool.Description = ant.String(spec.Description)
		}
		p.Tools = append(p.Tools, ant.ToolUnionParam{OfTool: &tool})
	}
	var opts []option.RequestOption
	if req.Temperature != nil {
		// MessageNewParams of this SDK version has no temperature field;
		// the API still takes one.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	return p, opts, nil
}

// inputSchema splits a JSON Schema object into the SDK's shape: properties
// and required as fields, everything else (additionalProperties, $defs, …)
// kept as extra fields, "type" always "object".
func inputSchema(schema map[string]any) ant.ToolInputSchemaParam {
	s := ant.ToolInputSchemaParam{Properties: schema["properties"]}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range schema {
		switch k {
		case "type", "properties", "required":
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	return s
}

// messages maps the conversation. Tool results are tool_result blocks in a
// user message, and the API wants all the results answering one assistant
// turn in the single user message that follows it: consecutive tool
// messages (and a user message right after them) are merged into one.
// An assistant message with neither text nor tool calls is left out, since
// the API refuses empty content.
func messages(msgs []model.Message) ([]ant.MessageParam, error) {
	var out []ant.MessageParam
	// userBlocks collects the blocks of the user message being built.
	var userBlocks []ant.ContentBlockParamUnion
	flush := func() {
		if len(userBlocks) > 0 {
			out = append(out, ant.NewUserMessage(userBlocks...))
			userBlocks = nil
		}
	}
	for i, msg := range msgs {
		switch msg.Role {
		case model.RoleUser:
			if msg.Content != "" { // the API refuses empty text blocks
				userBlocks = append(userBlocks, ant.NewTextBlock(msg.Content))
			}
		case model.RoleTool:
			if msg.ToolCallID == "" {
				return nil, skilld.Errorf(skilld.EINVALID, "anthropic: message %d: tool result without a tool call id", i)
			}
			userBlocks = append(userBlocks, toolResult(msg))
		case model.RoleAssistant:
			flush()
			var blocks []ant.ContentBlockParamUnion
			if msg.Content != "" {
				blocks = append(blocks, ant.NewTextBlock(msg.Content))
			}
			for j, tc := range msg.ToolCalls {
				blocks = append(blocks, ant.NewToolUseBlock(adapt.CallID(tc.ID, j), adapt.ObjectArguments(tc.Arguments), tc.Name))
			}
			if len(blocks) > 0 {
				out = append(out, ant.NewAssistantMessage(blocks...))
			}
		default:
			return nil, skilld.Errorf(skilld.EINVALID, "anthropic: message %d: unknown role %q", i, msg.Role)
		}
	}
	flush()
	return out, nil
}

// toolResult is the tool_result block for a tool message. A result with no
// output (a command that printed nothing) is sent without content: an empty
// text block would be refused.
func toolResult(msg model.Message) ant.ContentBlockParamUnion {
	if msg.Content != "" {
		return ant.NewToolResultBlock(msg.ToolCallID, msg.Content, msg.IsError)
	}
	return ant.ContentBlockParamUnion{OfToolResult: &ant.ToolResultBlockParam{ToolUseID: msg.ToolCallID, IsError: ant.Bool(msg.IsError)}}
}

// response builds the model.Response from the accumulated message.
func response(msg *ant.Message) *model.Response {
	out := model.Message{Role: model.RoleAssistant}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{
				ID:        b.ID,
				Name:      b.Name,
				Arguments: adapt.Arguments(string(b.Input)),
			})
		}
	}
	out.Content = text.String()
	stop := ""
	switch msg.StopReason {
	case ant.StopReasonMaxTokens, ant.StopReasonModelContextWindowExceeded:
		stop = model.StopLength
	case ant.StopReasonToolUse:
		stop = model.StopToolCalls
	}
	u := msg.Usage
	return &model.Response{
		Message:    out,
		StopReason: adapt.Stop(stop, len(out.ToolCalls) > 0),
		Usage: model.Usage{
			// input_tokens counts only what was neither written to nor read
			// from the prompt cache; the prompt is the sum of the three.
			PromptTokens:     int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
			CompletionTokens: int(u.OutputTokens),
		},
	}
}

// failure maps what the SDK returned to the model package's error codes,
// and says whether a new call may cure it (an error event inside the 200
// stream: the SDK retries HTTP statuses itself, not those).
func (m *Model) failure(ctx context.Context, err error, rec *adapt.Recorder) (bool, error) {
	f := adapt.Failure{Provider: provider, APIKey: m.apiKey, Err: err, Recorder: rec, Ctx: ctx}
	var apiErr *ant.Error
	if errors.As(err, &apiErr) {
		if apiErr.StatusCode >= 400 || ctx.Err() != nil {
			f.Status, f.Message = apiErr.StatusCode, apiErr.Message
			return false, f.Classify()
		}
		// An error event in a stream answered with 200.
		return streamError(string(apiErr.Type()), apiErr.Message, m.apiKey)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "received error while streaming: "); ok && ctx.Err() == nil {
		var v struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(msg), &v) == nil && v.Error.Type != "" {
			msg = v.Error.Message
		}
		return streamError(v.Error.Type, msg, m.apiKey)
	}
	// A connection that failed before an answer was retried by the SDK; one
	// that broke while the 200 stream was being read was not.
	return ctx.Err() == nil && rec.Status == 200, f.Classify()
}

// streamError maps an error event of the stream by its type.
func streamError(typ, msg, key string) (bool, error) {
	msg = adapt.Redact(msg, key)
	if typ != "" {
		msg = typ + ": " + msg
	}
	switch typ {
	case "rate_limit_error":
		return true, skilld.Errorf(skilld.ERATELIMITED, "anthropic: the stream failed: %s", msg)
	case "invalid_request_error", "not_found_error":
		return false, skilld.Errorf(skilld.EINVALID, "anthropic: the stream failed: %s", msg)
	case "authentication_error", "permission_error":
		return false, skilld.Errorf(skilld.EUNAUTHORIZED, "anthropic: the stream failed: %s", msg)
	}
	// overloaded_error, api_error, timeout_error and anything new.
	return true, skilld.Errorf(skilld.EUNAVAILABLE, "anthropic: the stream failed: %s", msg)
}
