package model

import (
	"strings"

	"github.com/skilld/skilld"
)

// Providers a model reference can name.
const (
	ProviderOpenAI    = "openai"    // OpenAI-compatible Chat Completions
	ProviderAnthropic = "anthropic" // Anthropic Messages
	ProviderScripted  = "scripted"  // a script file (LoadScript)
)

// Providers lists the known providers, for messages and help texts.
func Providers() []string {
	return []string{ProviderOpenAI, ProviderAnthropic, ProviderScripted}
}

// Ref is a parsed model reference "provider:name", e.g. "openai:gpt-4o",
// "openai:llama3.1:8b" (an Ollama tag: only the first colon separates),
// "anthropic:claude-sonnet-4-5", "scripted:demo.json" (Name is then a path).
type Ref struct {
	Provider string
	Name     string
}

func (r Ref) String() string { return r.Provider + ":" + r.Name }

// ParseRef parses a model reference. The provider is case-insensitive; an
// unknown or missing one is EINVALID naming the known ones.
func ParseRef(s string) (Ref, error) {
	provider, name, ok := strings.Cut(strings.TrimSpace(s), ":")
	provider = strings.ToLower(provider)
	known := strings.Join(Providers(), ", ")
	if !ok {
		return Ref{}, skilld.Errorf(skilld.EINVALID, "model %q: want provider:name with a provider of %s (e.g. openai:gpt-4o-mini)", s, known)
	}
	switch provider {
	case ProviderOpenAI, ProviderAnthropic, ProviderScripted:
	default:
		return Ref{}, skilld.Errorf(skilld.EINVALID, "model %q: unknown provider %q; known providers: %s", s, provider, known)
	}
	if name == "" {
		return Ref{}, skilld.Errorf(skilld.EINVALID, "model %q: no model name after %q", s, provider+":")
	}
	return Ref{Provider: provider, Name: name}, nil
}

// contextWindows are the context windows (input and output together, in
// tokens) of models whose providers publish them. A pattern matches the
// name itself and the name followed by "-" (dated snapshots and variants:
// "gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929"); the longest pattern
// that matches wins. Only models whose window is one plain number are here:
// GPT-5 (400,000 in total but at most 272,000 of input) is left out, as are
// local models, whose window is whatever the server was started with.
var contextWindows = map[string]int{
	"gpt-4o":            128000,
	"gpt-4o-mini":       128000,
	"chatgpt-4o-latest": 128000,
	"gpt-4-turbo":       128000,
	"gpt-4.1":           1047576,
	"gpt-4.1-mini":      1047576,
	"gpt-4.1-nano":      1047576,
	"o1":                200000,
	"o1-mini":           128000,
	"o1-preview":        128000,
	"o3":                200000,
	"o3-mini":           200000,
	"o4-mini":           200000,
	"claude-opus-4":     200000,
	"claude-sonnet-4":   200000,
	"claude-haiku-4":    200000,
	"claude-3-7-sonnet": 200000,
	"claude-3-5-sonnet": 200000,
	"claude-3-5-haiku":  200000,
	"claude-3-opus":     200000,
	"claude-3-haiku":    200000,
}

// ContextWindow returns the context window of the model a reference names,
// when it is in the table above. The reference may be "provider:name" or a
// bare name; scripted models have no window.
func ContextWindow(ref string) (int, bool) {
	name := ref
	if r, err := ParseRef(ref); err == nil {
		if r.Provider == ProviderScripted {
			return 0, false
		}
		name = r.Name
	}
	name = strings.ToLower(strings.TrimSpace(name))
	best, window := "", 0
	for pattern, w := range contextWindows {
		if (name == pattern || strings.HasPrefix(name, pattern+"-")) && len(pattern) > len(best) {
			best, window = pattern, w
		}
	}
	return window, best != ""
}
