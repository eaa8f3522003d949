package adapt

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
)

// DefaultMaxRetries is how many times a call is retried after the first
// attempt when the adapter's config leaves MaxRetries at 0.
const DefaultMaxRetries = 4

// Retries turns a config's MaxRetries into the SDK's: 0 is the default,
// negative is none.
func Retries(n int) int {
	switch {
	case n == 0:
		return DefaultMaxRetries
	case n < 0:
		return 0
	}
	return n
}

// Arguments turns the argument text a model produced into the ToolCall's
// arguments, which must always be valid JSON: the runtime logs them as
// JSON and a raw message that does not parse would fail the whole entry.
// Empty arguments are {}; text that does not parse (a model's mistake, or a
// call cut off at max tokens) becomes a JSON string of that text, so the
// tool's argument check reports it to the model instead of the log failing.
func Arguments(raw string) json.RawMessage {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(raw)) {
		return json.RawMessage(raw)
	}
	b, _ := json.Marshal(raw)
	return b
}

// ObjectArguments returns args when they are a JSON object and {} otherwise,
// for providers that refuse a tool call whose input is not an object
// (Anthropic's tool_use.input). Only Arguments' string fallback produces
// such calls, and the tool result already tells the model what went wrong.
func ObjectArguments(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return args
}

// CallID returns id, or a stand-in unique within the answer for servers
// that send tool calls without ids (the tool result must name its call).
func CallID(id string, i int) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("call_%d", i)
}

// Stop settles the stop reason from the provider's (already mapped to
// model.Stop* or "") and whether the answer carries tool calls. Calls
// without a length cut-off are StopToolCalls whatever the provider said:
// some OpenAI-compatible servers finish a tool-calling answer with "stop".
// Other reasons (content filter, refusal, pause) are StopEnd: the text says
// what happened and the turn is over.
func Stop(mapped string, hasCalls bool) string {
	switch {
	case mapped == model.StopLength:
		return model.StopLength
	case hasCalls:
		return model.StopToolCalls
	}
	return model.StopEnd
}

// Schema decodes a ToolSpec's JSON Schema into an object. An empty schema is
// an object without properties, the form both APIs accept for "no
// arguments".
func Schema(spec model.ToolSpec) (map[string]any, error) {
	if len(spec.Schema) == 0 || string(spec.Schema) == "null" {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(spec.Schema, &m); err != nil || m == nil {
		return nil, skilld.Errorf(skilld.EINVALID, "tool %q: schema is not a JSON object", spec.Name)
	}
	return m, nil
}

// ModelName picks the request's model name over the adapter's default.
func ModelName(provider, fromRequest, fromConfig string) (string, error) {
	switch {
	case fromRequest != "":
		return fromRequest, nil
	case fromConfig != "":
		return fromConfig, nil
	}
	return "", skilld.Errorf(skilld.EINVALID, "%s: no model name (set it in the request or the adapter's config)", provider)
}
