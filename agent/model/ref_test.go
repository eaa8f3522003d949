package model_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
)

func TestParseRef(t *testing.T) {
	for in, want := range map[string]model.Ref{
		"openai:gpt-4o-mini":          {Provider: "openai", Name: "gpt-4o-mini"},
		"OpenAI:gpt-4o":               {Provider: "openai", Name: "gpt-4o"},
		"openai:llama3.1:8b":          {Provider: "openai", Name: "llama3.1:8b"},
		"anthropic:claude-sonnet-4-5": {Provider: "anthropic", Name: "claude-sonnet-4-5"},
		"scripted:testdata/demo.json": {Provider: "scripted", Name: "testdata/demo.json"},
		"scripted:C:\\demo.json":      {Provider: "scripted", Name: "C:\\demo.json"},
	} {
		got, err := model.ParseRef(in)
		if err != nil || got != want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if err == nil && got.String() != strings.ToLower(in[:len(got.Provider)])+in[len(got.Provider):] {
			t.Errorf("String() = %q for %q", got.String(), in)
		}
	}
	for in, want := range map[string]string{
		"gpt-4o":        "want provider:name",
		"google:gemini": `unknown provider "google"; known providers: openai, anthropic, scripted`,
		"openai:":       "no model name",
		"":              "want provider:name",
		"ollama:llama3": "known providers",
	} {
		_, err := model.ParseRef(in)
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRef(%q): %v, want EINVALID containing %q", in, err, want)
		}
	}
}

func TestContextWindow(t *testing.T) {
	for ref, want := range map[string]int{
		"openai:gpt-4o":                        128000,
		"openai:gpt-4o-2024-08-06":             128000,
		"gpt-4o-mini":                          128000,
		"openai:gpt-4.1":                       1047576,
		"openai:gpt-4.1-mini-2025-04-14":       1047576,
		"openai:o3":                            200000,
		"openai:o4-mini":                       200000,
		"openai:o1-mini":                       128000,
		"anthropic:claude-sonnet-4-5-20250929": 200000,
		"anthropic:claude-opus-4-1":            200000,
		"anthropic:claude-3-5-haiku-20241022":  200000,
		"anthropic:claude-3-7-sonnet-latest":   200000,
		"anthropic:Claude-Sonnet-4-20250514":   200000,
	} {
		if got, ok := model.ContextWindow(ref); !ok || got != want {
			t.Errorf("ContextWindow(%q) = %d, %v; want %d", ref, got, ok, want)
		}
	}
	for _, ref := range []string{"openai:llama3.1:8b", "openai:gpt-5", "openai:gpt-4o1", "scripted:gpt-4o", "anthropic:claude-2", "openai:o3mini", ""} {
		if got, ok := model.ContextWindow(ref); ok {
			t.Errorf("ContextWindow(%q) = %d, want unknown", ref, got)
		}
	}
}
