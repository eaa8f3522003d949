package provider_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/provider"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// chatServer answers one Chat Completions stream and reports the
// Authorization header it got.
func chatServer(t *testing.T) (*httptest.Server, chan string) {
	auth := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth <- r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, auth
}

var hello = &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}

func TestOpenOpenAIFromEnvironment(t *testing.T) {
	srv, auth := chatServer(t)
	m, err := provider.Open("openai:llama3.1:8b", provider.Options{Getenv: env(map[string]string{
		"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "from-env",
	})})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := model.Collect(context.Background(), m, hello)
	if err != nil || resp.Message.Content != "hi" {
		t.Fatalf("%v %+v", err, resp)
	}
	if got := <-auth; got != "Bearer from-env" {
		t.Errorf("Authorization %q", got)
	}
}

func TestExplicitOptionsWin(t *testing.T) {
	srv, auth := chatServer(t)
	m, err := provider.Open("openai:m", provider.Options{BaseURL: srv.URL, APIKey: "explicit", Getenv: env(map[string]string{
		"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "from-env",
	})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Collect(context.Background(), m, hello); err != nil {
		t.Fatal(err)
	}
	if got := <-auth; got != "Bearer explicit" {
		t.Errorf("Authorization %q", got)
	}
}

func TestKeyRequiredForPublicAPIs(t *testing.T) {
	none := env(nil)
	for _, ref := range []string{"openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"} {
		_, err := provider.Open(ref, provider.Options{Getenv: none})
		if skilld.ErrorCode(err) != skilld.EUNAUTHORIZED || !strings.Contains(err.Error(), "_API_KEY") {
			t.Errorf("Open(%q) without a key: %v", ref, err)
		}
	}
	// A local server needs none.
	if _, err := provider.Open("openai:llama3", provider.Options{BaseURL: "http://localhost:11434", Getenv: none}); err != nil {
		t.Errorf("Ollama without a key: %v", err)
	}
	if _, err := provider.Open("anthropic:claude-sonnet-4-5", provider.Options{Getenv: env(map[string]string{"ANTHROPIC_BASE_URL": "http://proxy:8080"})}); err != nil {
		t.Errorf("a proxy without a key: %v", err)
	}
	if _, err := provider.Open("anthropic:claude-sonnet-4-5", provider.Options{Getenv: env(map[string]string{"ANTHROPIC_API_KEY": "k"})}); err != nil {
		t.Errorf("key from the environment: %v", err)
	}
}

func TestOpenScripted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.json")
	if err := os.WriteFile(path, []byte(`[{"text":"hello from the script"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := provider.Open("scripted:"+path, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := model.Collect(context.Background(), m, hello)
	if err != nil || resp.Message.Content != "hello from the script" {
		t.Fatalf("%v %+v", err, resp)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`[{"tool_calls":[{}]}]`), 0o644)
	for ref, want := range map[string]string{
		"scripted:" + filepath.Join(t.TempDir(), "missing.json"): "no such file",
		"scripted:" + bad: "tool call 1 has no name",
		"gemini:pro":      "known providers: openai, anthropic, scripted",
		"openai:m":        "base URL",
	} {
		_, err := provider.Open(ref, provider.Options{BaseURL: map[bool]string{true: "not a url"}[ref == "openai:m"]})
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q): %v, want EINVALID containing %q", ref, err, want)
		}
	}
}
