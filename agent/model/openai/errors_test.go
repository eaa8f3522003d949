package openai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/internal/modeltest"
	"github.com/skilld/skilld/agent/model/openai"
)

var hello = &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}

var ok = sse(chunk(delta(`{"content":"fine"}`, "stop"), "null"), chunk(`[]`, usageLast))

func TestErrorStatuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		reply    func(http.ResponseWriter)
		code     string
		contains []string
	}{
		{"401", status(401, `{"error":{"message":"Incorrect API key provided: sk-test-***-123. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			skilld.EUNAUTHORIZED, []string{"openai", "API key was rejected", "401"}},
		{"403", status(403, `{"error":{"message":"Project does not have access to model gpt-5","type":"invalid_request_error","code":"model_not_found"}}`),
			skilld.EUNAUTHORIZED, []string{"openai", "lacks permission", "does not have access"}},
		{"400", status(400, `{"error":{"message":"Invalid schema for function 'get_weather'.","type":"invalid_request_error","param":"tools[0].function.parameters","code":"invalid_function_parameters"}}`),
			skilld.EINVALID, []string{"openai", "400", "Invalid schema for function 'get_weather'."}},
		{"404 unknown model", status(404, `{"error":{"message":"The model `+"`gpt-9`"+` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`),
			skilld.EINVALID, []string{"The model `gpt-9` does not exist"}},
		// vLLM puts the message at the top level.
		{"404 vLLM", status(404, `{"object":"error","message":"The model `+"`llama`"+` does not exist.","type":"NotFoundError","param":null,"code":404}`),
			skilld.EINVALID, []string{"The model `llama` does not exist."}},
		// Ollama's compatible endpoint.
		{"404 Ollama", status(404, `{"error":{"message":"model \"qwen3\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`),
			skilld.EINVALID, []string{`model "qwen3" not found`}},
		{"422", status(422, `{"detail":"messages: field required"}`), skilld.EINVALID, []string{"messages: field required"}},
		{"413", status(413, `{"error":{"message":"too big"}}`), skilld.ETOOLARGE, []string{"too big"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, tt.reply)
			_, _, err := modeltest.Stream(t, newModel(t, s, 3), hello)
			t.Log(err)
			if skilld.ErrorCode(err) != tt.code {
				t.Fatalf("err %v (code %q), want %s", err, skilld.ErrorCode(err), tt.code)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q does not contain %q", err, c)
				}
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "sk-test") {
				t.Errorf("error %q shows the API key", err)
			}
			if s.Requests() != 1 {
				t.Errorf("%d requests: a %s must not be retried", s.Requests(), tt.name)
			}
		})
	}
}

func TestRetryAfterSecondsThenSuccess(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(429, `{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","code":"rate_limit_exceeded"}}`, "Retry-After", "1"), ok)
	start := time.Now()
	_, resp, err := modeltest.Stream(t, newModel(t, s, 0), hello)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "fine" || s.Requests() != 2 {
		t.Errorf("content %q after %d requests", resp.Message.Content, s.Requests())
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("retried after %v: Retry-After: 1 not honored", d)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)
	s := newServer(t, status(429, `{"error":{"message":"slow down"}}`, "Retry-After", at), ok)
	start := time.Now()
	if _, _, err := modeltest.Stream(t, newModel(t, s, 0), hello); err != nil {
		t.Fatal(err)
	}
	// The date has one-second resolution, so the wait is 1–2 s.
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("retried after %v: Retry-After date not honored", d)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(500, `{"error":{"message":"The server had an error while processing your request."}}`), ok)
	_, resp, err := modeltest.Stream(t, newModel(t, s, 0), hello)
	if err != nil || resp.Message.Content != "fine" || s.Requests() != 2 {
		t.Fatalf("%v %+v after %d requests", err, resp, s.Requests())
	}
}

func TestServerErrorForever(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(503, `{"error":{"message":"overloaded"}}`))
	_, _, err := modeltest.Stream(t, newModel(t, s, 2), hello)
	t.Log(err)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "3 attempts") || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("err %v, want EUNAVAILABLE after 3 attempts", err)
	}
	if s.Requests() != 3 {
		t.Errorf("%d requests, want 1 + 2 retries", s.Requests())
	}
}

func TestRateLimitedForever(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(429, `{"error":{"message":"quota"}}`, "Retry-After-Ms", "10"))
	_, _, err := modeltest.Stream(t, newModel(t, s, 2), hello)
	if skilld.ErrorCode(err) != skilld.ERATELIMITED || s.Requests() != 3 {
		t.Fatalf("err %v after %d requests, want ERATELIMITED after 3", err, s.Requests())
	}
}

// A context that ends while the adapter waits out a Retry-After is still
// reported as the rate limit it was waiting for.
func TestContextEndsWhileWaitingToRetry(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(429, `{"error":{"message":"quota"}}`, "Retry-After", "30"))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	m := newModel(t, s, 0)
	_, err := model.Collect(ctx, m, hello)
	t.Log(err)
	if skilld.ErrorCode(err) != skilld.ERATELIMITED || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want ERATELIMITED wrapping the deadline", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t, ok)
	url := s.URL
	s.Close()
	m, _ := openai.New(openai.Config{BaseURL: url, Model: "m", MaxRetries: -1})
	_, err := model.Collect(context.Background(), m, hello)
	t.Log(err)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "openai") {
		t.Fatalf("err %v, want EUNAVAILABLE", err)
	}
}

func TestErrorEventInStream(t *testing.T) {
	t.Parallel()
	s := newServer(t, sse(chunk(delta(`{"content":"par"}`, ""), "null"), `{"error":{"message":"upstream model crashed","type":"server_error"}}`))
	texts, _, err := modeltest.Stream(t, newModel(t, s, 0), hello)
	t.Log(err)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "upstream model crashed") {
		t.Fatalf("err %v, want EUNAVAILABLE with the message", err)
	}
	if len(texts) != 1 || texts[0] != "par" {
		t.Errorf("texts before the error %q", texts)
	}
}

func TestNotAStream(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(200, `{"id":"x","object":"chat.completion","choices":[]}`))
	_, _, err := modeltest.Stream(t, newModel(t, s, 0), hello)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "no stream chunks") {
		t.Fatalf("err %v", err)
	}
}

// Each retry is reported as it starts, with what failed before it and
// never the API key; the answer still arrives.
func TestRetriesReported(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(503, `{"error":{"message":"overloaded, key sk-test-secret-key-123"}}`, "Retry-After-Ms", "10"),
		status(500, `{"error":{"message":"boom"}}`, "Retry-After-Ms", "10"), ok)
	var got []model.Retry
	m, err := openai.New(openai.Config{BaseURL: s.URL, APIKey: "sk-test-secret-key-123", Model: "gpt-4o-mini", MaxRetries: 3,
		OnRetry: func(r model.Retry) { got = append(got, r) }})
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := modeltest.Stream(t, m, hello)
	if err != nil || resp.Message.Content != "fine" {
		t.Fatalf("%v %+v", err, resp)
	}
	if len(got) != 2 {
		t.Fatalf("retries reported: %+v, want 2", got)
	}
	for i, want := range []struct {
		status int
		reason string
	}{{503, "HTTP 503 Service Unavailable: overloaded"}, {500, "HTTP 500 Internal Server Error: boom"}} {
		r := got[i]
		if r.Provider != "openai" || r.Attempt != i+2 || r.Attempts != 4 || r.Status != want.status || !strings.HasPrefix(r.Reason, want.reason) {
			t.Errorf("retry %d: %+v, want attempt %d of 4 after %q", i, r, i+2, want.reason)
		}
		if strings.Contains(r.Reason, "secret") {
			t.Errorf("retry %d shows the API key: %q", i, r.Reason)
		}
	}
}

// A refused connection is reported by its cause, not the SDK's wording.
func TestConnectionRefusedRetriesReported(t *testing.T) {
	t.Parallel()
	s := newServer(t, ok)
	url := s.URL
	s.Close()
	var got []model.Retry
	m, _ := openai.New(openai.Config{BaseURL: url, Model: "m", MaxRetries: 1, OnRetry: func(r model.Retry) { got = append(got, r) }})
	if _, err := model.Collect(context.Background(), m, hello); skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
		t.Fatalf("err %v, want EUNAVAILABLE", err)
	}
	if len(got) != 1 || got[0].Attempt != 2 || got[0].Status != 0 || !strings.Contains(got[0].Reason, "connection refused") || strings.Contains(got[0].Reason, "Post ") {
		t.Errorf("retries reported: %+v", got)
	}
}
