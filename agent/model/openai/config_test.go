package openai_test

import (
	"context"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/internal/modeltest"
	"github.com/skilld/skilld/agent/model/openai"
)

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "https://api.openai.com/v1/",
		"http://localhost:11434":            "http://localhost:11434/v1/",
		"http://localhost:11434/":           "http://localhost:11434/v1/",
		"http://localhost:8000/v1":          "http://localhost:8000/v1/",
		"http://localhost:8000/v1/":         "http://localhost:8000/v1/",
		"https://openrouter.ai/api/v1":      "https://openrouter.ai/api/v1/",
		" https://api.openai.com/v1 ":       "https://api.openai.com/v1/",
		"http://127.0.0.1:1234/custom/path": "http://127.0.0.1:1234/custom/path/",
	} {
		got, err := openai.BaseURL(in)
		if err != nil || got != want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"localhost:11434", "ftp://x/", "http://", "::"} {
		if _, err := openai.BaseURL(bad); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("BaseURL(%q): %v, want EINVALID", bad, err)
		}
	}
}

func TestNoModelName(t *testing.T) {
	m, _ := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1"})
	_, err := model.Collect(context.Background(), m, &model.Request{})
	if skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("err %v, want EINVALID", err)
	}
}

// The consumer may stop reading early; the stream must be released.
func TestStopReadingEarly(t *testing.T) {
	s := newServer(t, sse(chunk(delta(`{"content":"a"}`, ""), "null"), chunk(delta(`{"content":"b"}`, "stop"), "null")))
	m := newModel(t, s, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for c, err := range m.Generate(ctx, &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "x"}}}) {
		if err != nil || c.Text != "a" {
			t.Fatalf("first chunk %+v %v", c, err)
		}
		break
	}
}

// The adapter's config is the whole truth: an empty key sends no key, even
// when the SDK could find one in the environment.
func TestEmptyKeySendsNone(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	s := newServer(t, sse(chunk(delta(`{"content":"hi"}`, "stop"), "null")))
	m, err := openai.New(openai.Config{BaseURL: s.URL, Model: "llama3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := modeltest.Stream(t, m, &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if h := s.Header(0).Get("Authorization"); h != "" {
		t.Errorf("Authorization %q sent without a configured key", h)
	}
}
