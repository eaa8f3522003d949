package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/skilld/skilld"
)

// Step is one answer of a Scripted model: a fixed Response, or a function
// of the request (so a test can check what the runtime sent, and answer
// from it). Exactly one of the two is set.
type Step struct {
	Response *Response
	Func     func(*Request) (*Response, error)
}

// Reply is a Step answering text and/or tool calls. Calls without an ID get
// one ("call_<step>_<n>"); the stop reason follows from the calls.
func Reply(text string, calls ...ToolCall) Step {
	return Step{Response: &Response{Message: Message{Role: RoleAssistant, Content: text, ToolCalls: calls}}}
}

// Call is a ToolCall with its arguments marshaled from v (which must
// marshal: it is meant for literals in tests and demos).
func Call(name string, v any) ToolCall {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("model.Call(%q): %v", name, err))
	}
	return ToolCall{Name: name, Arguments: b}
}

// Scripted is a deterministic Model for tests and demos: it answers the
// n-th request with the n-th step, streaming the text in a few chunks and
// then the Response, and records every request it received. Once the steps
// run out every further request fails with an EINVALID error saying so. It
// is safe for concurrent use; steps are taken in the order requests arrive.
//
// Usage is reported as the step's Response sets it (zero by default: a
// scripted answer has no real cost, and zero means "not reported").
type Scripted struct {
	mu       sync.Mutex
	steps    []Step
	requests []*Request
	// skipped are steps answered before a resume (Resume).
	skipped int
}

// Resume skips the first answered steps: a resumed task already has their
// answers in its log (Resumable).
func (s *Scripted) Resume(answered int) {
	s.mu.Lock()
	s.skipped += answered
	s.mu.Unlock()
}

// NewScripted returns a Scripted model answering with steps in order.
func NewScripted(steps ...Step) *Scripted {
	return &Scripted{steps: steps}
}

// Requests returns copies of the requests received so far, in order.
func (s *Scripted) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Remaining is the number of steps not used yet.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(0, len(s.steps)-s.skipped-len(s.requests))
}

// Generate answers req with the next step.
func (s *Scripted) Generate(ctx context.Context, req *Request) iter.Seq2[*Chunk, error] {
	return func(yield func(*Chunk, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, ctxError(err))
			return
		}
		s.mu.Lock()
		n := s.skipped + len(s.requests)
		// Record a copy: the runtime may reuse the request's slices for the
		// next call, and tests must see what was sent at the time.
		s.requests = append(s.requests, cloneRequest(req))
		var step Step
		if n < len(s.steps) {
			step = s.steps[n]
		}
		total := len(s.steps)
		s.mu.Unlock()

		if n >= total {
			yield(nil, skilld.Errorf(skilld.EINVALID,
				"scripted model: the script has %d steps and this is request %d; add a step for it", total, n+1))
			return
		}
		resp, err := step.run(req)
		if err != nil {
			yield(nil, stepError(n, err))
			return
		}
		resp = complete(resp, n)
		for _, part := range splitText(resp.Message.Content, 3) {
			if err := ctx.Err(); err != nil {
				yield(nil, ctxError(err))
				return
			}
			if !yield(&Chunk{Text: part}, nil) {
				return
			}
		}
		yield(&Chunk{Response: resp}, nil)
	}
}

func (st Step) run(req *Request) (*Response, error) {
	switch {
	case st.Func != nil:
		return st.Func(req)
	case st.Response != nil:
		return st.Response, nil
	}
	return nil, skilld.Errorf(skilld.EINVALID, "the step has neither a response nor a function")
}

// stepError keeps a step's *skilld.Error as it is (a test simulating a rate
// limit gets ERATELIMITED through) and types any other error.
func stepError(n int, err error) error {
	var e *skilld.Error
	if errors.As(err, &e) {
		return err
	}
	return skilld.Errorf(skilld.EINTERNAL, "scripted model: step %d: %w", n+1, err)
}

func ctxError(err error) error {
	return skilld.Errorf(skilld.EUNAVAILABLE, "scripted model: %w", err)
}

// complete returns a copy of resp with what a real adapter always sets:
// the assistant role, call ids, valid JSON arguments, the stop reason.
func complete(resp *Response, n int) *Response {
	if resp == nil {
		resp = &Response{}
	}
	out := *resp
	out.Message.Role = RoleAssistant
	out.Message.ToolCalls = slices.Clone(resp.Message.ToolCalls)
	for i := range out.Message.ToolCalls {
		tc := &out.Message.ToolCalls[i]
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d_%d", n+1, i+1)
		}
		if len(bytes.TrimSpace(tc.Arguments)) == 0 {
			tc.Arguments = json.RawMessage(`{}`)
		}
	}
	if out.StopReason == "" {
		out.StopReason = StopEnd
		if len(out.Message.ToolCalls) > 0 {
			out.StopReason = StopToolCalls
		}
	}
	return &out
}

// splitText cuts s into at most n pieces at word boundaries (a piece may
// hold several words), so consumers see a stream rather than one block.
func splitText(s string, n int) []string {
	if s == "" {
		return nil
	}
	words := strings.SplitAfter(s, " ")
	per := (len(words) + n - 1) / n
	var parts []string
	for i := 0; i < len(words); i += per {
		parts = append(parts, strings.Join(words[i:min(i+per, len(words))], ""))
	}
	return parts
}

func cloneRequest(req *Request) *Request {
	if req == nil {
		return &Request{}
	}
	c := *req
	c.Messages = slices.Clone(req.Messages)
	for i := range c.Messages {
		c.Messages[i].ToolCalls = slices.Clone(c.Messages[i].ToolCalls)
	}
	c.Tools = slices.Clone(req.Tools)
	if req.Temperature != nil {
		t := *req.Temperature
		c.Temperature = &t
	}
	return &c
}

// scriptStep is one step of a script file.
type scriptStep struct {
	Text       string `json:"text"`
	StopReason string `json:"stop_reason"`
	Usage      Usage  `json:"usage"`
	ToolCalls  []struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_calls"`
}

// LoadScript reads a script file for `skilld run --model scripted:FILE`: a
// JSON array of steps, each
//
//	{"text": "...", "tool_calls": [{"name": "...", "arguments": {...}}]}
//
// with optional "id" on a call, and optional "stop_reason" and "usage"
// ({"prompt_tokens": N, "completion_tokens": N}) on a step. Unknown fields
// are errors, so a typo does not silently change the demo.
func LoadScript(r io.Reader) (*Scripted, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var file []scriptStep
	if err := dec.Decode(&file); err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "script: %v", err)
	}
	if dec.More() {
		return nil, skilld.Errorf(skilld.EINVALID, "script: data after the array of steps")
	}
	var steps []Step
	for i, fs := range file {
		resp := &Response{Message: Message{Role: RoleAssistant, Content: fs.Text}, Usage: fs.Usage, StopReason: fs.StopReason}
		switch fs.StopReason {
		case "", StopEnd, StopToolCalls, StopLength:
		default:
			return nil, skilld.Errorf(skilld.EINVALID, "script: step %d: stop_reason %q is not one of end, tool_calls, length", i+1, fs.StopReason)
		}
		for j, tc := range fs.ToolCalls {
			if tc.Name == "" {
				return nil, skilld.Errorf(skilld.EINVALID, "script: step %d: tool call %d has no name", i+1, j+1)
			}
			args := bytes.TrimSpace(tc.Arguments)
			if len(args) == 0 {
				args = []byte(`{}`)
			} else if args[0] != '{' {
				return nil, skilld.Errorf(skilld.EINVALID, "script: step %d: tool call %d (%s): arguments must be a JSON object", i+1, j+1, tc.Name)
			}
			var compact bytes.Buffer
			_ = json.Compact(&compact, args) // valid: the decoder checked it
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Name, Arguments: compact.Bytes()})
		}
		steps = append(steps, Step{Response: resp})
	}
	if len(steps) == 0 {
		return nil, skilld.Errorf(skilld.EINVALID, "script: no steps")
	}
	return NewScripted(steps...), nil
}
