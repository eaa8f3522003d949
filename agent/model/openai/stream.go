package openai

import (
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/internal/adapt"
)

// assembler builds the answer from stream chunks.
//
// It is ours rather than the SDK's ChatCompletionAccumulator because the
// servers this adapter is for differ in ways that accumulator does not
// forgive (each checked against v3.98.0): it refuses a chunk whose id
// differs from the first chunk's (servers that send the id once, or a
// different id on the usage chunk), it adds up usage over all chunks (wrong
// for servers that report running totals on every chunk), and it reads a
// tool call without an "index" as index 0, merging several calls sent in one
// chunk into one. Here usage is the last one reported, and a call without an
// index is a new call when it brings a new id.
type assembler struct {
	chunks  int
	text    strings.Builder
	calls   []*callParts
	byIndex map[int64]*callParts
	finish  string
	usage   *model.Usage
}

type callParts struct {
	id, name string
	args     strings.Builder
}

// add takes one chunk and returns its text. Only choice 0 is read: the
// adapter never asks for more than one.
func (a *assembler) add(c oai.ChatCompletionChunk) (string, error) {
	a.chunks++
	if c.JSON.Usage.Valid() {
		a.usage = &model.Usage{PromptTokens: int(c.Usage.PromptTokens), CompletionTokens: int(c.Usage.CompletionTokens)}
	}
	var text string
	for _, choice := range c.Choices {
		if choice.Index != 0 {
			continue
		}
		text = choice.Delta.Content
		a.text.WriteString(text)
		for _, d := range choice.Delta.ToolCalls {
			if err := a.addCall(d); err != nil {
				return "", err
			}
		}
		if choice.FinishReason != "" {
			a.finish = choice.FinishReason
		}
	}
	return text, nil
}

// maxCalls bounds the tool calls of one answer, so a hostile or broken
// server cannot make the adapter allocate without end.
const maxCalls = 1024

func (a *assembler) addCall(d oai.ChatCompletionChunkChoiceDeltaToolCall) error {
	var p *callParts
	var last *callParts
	if n := len(a.calls); n > 0 {
		last = a.calls[n-1]
	}
	switch {
	case d.JSON.Index.Valid():
		if a.byIndex == nil {
			a.byIndex = map[int64]*callParts{}
		}
		p = a.byIndex[d.Index]
		if p == nil {
			p = &callParts{}
			a.byIndex[d.Index] = p
			a.calls = append(a.calls, p)
		}
	case last != nil && (d.ID == "" || d.ID == last.id):
		// No index and no new id: the continuation of the last call.
		p = last
	default:
		p = &callParts{}
		a.calls = append(a.calls, p)
	}
	if len(a.calls) > maxCalls {
		return skilld.Errorf(skilld.EUNAVAILABLE, "openai: the stream has more than %d tool calls", maxCalls)
	}
	if d.ID != "" {
		p.id = d.ID
	}
	// Names arrive whole in the first delta of a call; a server that
	// repeats the name on every delta must not make "readread".
	if n := d.Function.Name; n != "" && n != p.name {
		p.name += n
	}
	p.args.WriteString(d.Function.Arguments)
	return nil
}

// response is the complete answer once the stream has ended.
func (a *assembler) response() (*model.Response, error) {
	if a.chunks == 0 {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE,
			"openai: the server sent no stream chunks (does it support streaming at this base URL?)")
	}
	msg := model.Message{Role: model.RoleAssistant, Content: a.text.String()}
	for i, p := range a.calls {
		if p.name == "" {
			return nil, skilld.Errorf(skilld.EUNAVAILABLE, "openai: tool call %d arrived without a name", i)
		}
		msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{
			ID:        adapt.CallID(p.id, i),
			Name:      p.name,
			Arguments: adapt.Arguments(p.args.String()),
		})
	}
	resp := &model.Response{Message: msg, StopReason: adapt.Stop(finishReason(a.finish), len(msg.ToolCalls) > 0)}
	if a.usage != nil {
		resp.Usage = *a.usage
	}
	return resp, nil
}

// finishReason maps Chat Completions' finish_reason.
func finishReason(r string) string {
	switch r {
	case "length":
		return model.StopLength
	case "tool_calls", "function_call":
		return model.StopToolCalls
	}
	return model.StopEnd
}
