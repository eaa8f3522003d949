package openai

import (
	"encoding/json"
	"errors"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/internal/adapt"
)

// params maps a model.Request to the SDK's request: the system prompt as the
// first (system) message, then the conversation, then the tools.
func (m *Model) params(req *model.Request) (oai.ChatCompletionNewParams, error) {
	name, err := adapt.ModelName(provider, req.Model, m.model)
	if err != nil {
		return oai.ChatCompletionNewParams{}, err
	}
	p := oai.ChatCompletionNewParams{
		Model: shared.ChatModel(name),
		StreamOptions: oai.ChatCompletionStreamOptionsParam{
			IncludeUsage: oai.Bool(true),
		},
	}
	if req.System != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		mp, err := message(msg)
		if err != nil {
			return p, skilld.Errorf(skilld.EINVALID, "openai: message %d: %s", i, skilld.ErrorMessage(err))
		}
		p.Messages = append(p.Messages, mp)
	}
	for _, spec := range req.Tools {
		schema, err := adapt.Schema(spec)
		if err != nil {
			return p, err
		}
		fn := shared.FunctionDefinitionParam{Name: spec.Name, Parameters: shared.FunctionParameters(schema)}
		if spec.Description != "" {
			fn.Description = oai.String(spec.Description)
		}
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(fn))
	}
	if req.MaxTokens > 0 {
		if m.completionTokens {
			p.MaxCompletionTokens = oai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = oai.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		p.Temperature = oai.Float(*req.Temperature)
	}
	return p, nil
}

// message maps one message. Chat Completions has no error flag on tool
// messages, so a failed call's result is sent as "Error: …" (unless the
// text already says so) for the model to tell failure from output.
func message(msg model.Message) (oai.ChatCompletionMessageParamUnion, error) {
	switch msg.Role {
	case model.RoleUser:
		return oai.UserMessage(msg.Content), nil
	case model.RoleAssistant:
		var a oai.ChatCompletionAssistantMessageParam
		if msg.Content != "" || len(msg.ToolCalls) == 0 {
			// Content may be omitted only when there are tool calls; some
			// compatible servers refuse a null content otherwise.
			a.Content.OfString = oai.String(msg.Content)
		}
		for i, tc := range msg.ToolCalls {
			args := string(tc.Arguments)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID:       adapt.CallID(tc.ID, i),
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case model.RoleTool:
		if msg.ToolCallID == "" {
			return oai.ChatCompletionMessageParamUnion{}, skilld.Errorf(skilld.EINVALID, "tool result without a tool call id")
		}
		content := msg.Content
		if msg.IsError && !strings.HasPrefix(strings.ToLower(content), "error") {
			content = "Error: " + content
		}
		return oai.ToolMessage(content, msg.ToolCallID), nil
	}
	return oai.ChatCompletionMessageParamUnion{}, skilld.Errorf(skilld.EINVALID, "unknown role %q", msg.Role)
}

// errorsAs finds the SDK's API error (an HTTP status >= 400).
func errorsAs(err error) (*oai.Error, bool) {
	var apiErr *oai.Error
	ok := errors.As(err, &apiErr)
	return apiErr, ok
}

// streamError reads the message of an error event the server sent inside a
// successful stream ({"error": {...}} in a data line).
func streamError(err error) (string, bool) {
	var se *ssestream.StreamError
	if !errors.As(err, &se) {
		return "", false
	}
	if msg := adapt.MessageFromBody(se.Event.Data); msg != "" {
		var v struct {
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &v)
		if v.Error.Type != "" {
			return v.Error.Type + ": " + msg, true
		}
		return msg, true
	}
	return se.Message, true
}
