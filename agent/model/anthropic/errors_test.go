package anthropic_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/anthropic"
	"github.com/skilld/skilld/agent/model/internal/modeltest"
)

var hello = &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}

var ok = sse(start(5), textBlock(0, "fine"), finish("end_turn", 1))

func TestErrorStatuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		reply    func(http.ResponseWriter)
		code     string
		contains []string
	}{
		{"401", status(401, "authentication_error", "invalid x-api-key"), skilld.EUNAUTHORIZED, []string{"anthropic", "API key was rejected", "401", "invalid x-api-key"}},
		{"403", status(403, "permission_error", "Your API key does not have permission to use the specified resource."), skilld.EUNAUTHORIZED, []string{"anthropic", "permission"}},
		{"400", status(400, "invalid_request_error", "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_X"), skilld.EINVALID, []string{"unexpected `tool_use_id`"}},
		{"404 unknown model", status(404, "not_found_error", "model: claude-9"), skilld.EINVALID, []string{"model: claude-9"}},
		{"413", status(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."), skilld.ETOOLARGE, []string{"maximum allowed"}},
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
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows the API key", err)
			}
			if s.Requests() != 1 {
				t.Errorf("%d requests: a %s must not be retried", s.Requests(), tt.name)
			}
		})
	}
}

func TestRateLimitRetryAfterThenSuccess(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", "Retry-After", "1"), ok)
	begin := time.Now()
	_, resp, err := modeltest.Stream(t, newModel(t, s, 0), hello)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "fine" || s.Requests() != 2 {
		t.Errorf("content %q after %d requests", resp.Message.Content, s.Requests())
	}
	if d := time.Since(begin); d < 900*time.Millisecond {
		t.Errorf("retried after %v: Retry-After: 1 not honored", d)
	}
}

func TestOverloadedThenSuccess(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(529, "overloaded_error", "Overloaded"), ok)
	_, resp, err := modeltest.Stream(t, newModel(t, s, 0), hello)
	if err != nil || resp.Message.Content != "fine" || s.Requests() != 2 {
		t.Fatalf("%v %+v after %d requests", err, resp, s.Requests())
	}
}

func TestServerErrorForever(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(500, "api_error", "Internal server error"))
	_, _, err := modeltest.Stream(t, newModel(t, s, 2), hello)
	t.Log(err)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "3 attempts") {
		t.Fatalf("err %v, want EUNAVAILABLE after 3 attempts", err)
	}
	if s.Requests() != 3 {
		t.Errorf("%d requests, want 1 + 2 retries", s.Requests())
	}
}

func TestRateLimitedForever(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(429, "rate_limit_error", "slow down", "Retry-After-Ms", "10"))
	_, _, err := modeltest.Stream(t, newModel(t, s, 1), hello)
	if skilld.ErrorCode(err) != skilld.ERATELIMITED || s.Requests() != 2 {
		t.Fatalf("err %v after %d requests, want ERATELIMITED after 2", err, s.Requests())
	}
}

// An overloaded error inside a 200 stream, before any text, is retried by
// the adapter (the SDK retries only HTTP statuses).
func TestOverloadedEventBeforeTextIsRetried(t *testing.T) {
	t.Parallel()
	s := newServer(t,
		sse(start(5), ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
		ok)
	_, resp, err := modeltest.Stream(t, newModel(t, s, 0), hello)
	if err != nil || resp.Message.Content != "fine" || s.Requests() != 2 {
		t.Fatalf("%v %+v after %d requests", err, resp, s.Requests())
	}
}

// After text has reached the caller, a retry would repeat it: the error is
// returned instead.
func TestErrorEventAfterText(t *testing.T) {
	t.Parallel()
	s := newServer(t,
		sse(start(5), ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hal"}}`),
			ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
		ok)
	texts, _, err := modeltest.Stream(t, newModel(t, s, 3), hello)
	t.Log(err)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "Overloaded") || s.Requests() != 1 {
		t.Fatalf("err %v after %d requests", err, s.Requests())
	}
	if strings.Join(texts, "") != "Hal" {
		t.Errorf("texts %q", texts)
	}
}

func TestStreamCutShort(t *testing.T) {
	t.Parallel()
	s := newServer(t, sse(start(5), textBlock(0, "par")))
	_, _, err := modeltest.Stream(t, newModel(t, s, 0), hello)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "message_stop") {
		t.Fatalf("err %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t, ok)
	url := s.URL
	s.Close()
	m, _ := anthropic.New(anthropic.Config{BaseURL: url, Model: "m", MaxRetries: -1})
	_, err := model.Collect(context.Background(), m, hello)
	t.Log(err)
	if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("err %v, want EUNAVAILABLE", err)
	}
}

// Both kinds of retry are reported as they start, numbered as one
// sequence: the SDK's after an HTTP status, and the adapter's own after an
// error event inside a 200 stream.
func TestRetriesReported(t *testing.T) {
	t.Parallel()
	s := newServer(t, status(529, "overloaded_error", "Overloaded", "Retry-After-Ms", "10"),
		sse(start(5), ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
		ok)
	var got []model.Retry
	m, err := anthropic.New(anthropic.Config{BaseURL: s.URL, APIKey: "sk-ant-test-secret-key", Model: "claude-sonnet-4-5",
		OnRetry: func(r model.Retry) { got = append(got, r) }})
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := modeltest.Stream(t, m, hello)
	if err != nil || resp.Message.Content != "fine" || s.Requests() != 3 {
		t.Fatalf("%v %+v after %d requests", err, resp, s.Requests())
	}
	if len(got) != 2 || got[0].Status != 529 || got[0].Reason != "HTTP 529: Overloaded" || got[0].Attempt != 2 || got[0].Attempts != 5 ||
		got[1].Status != 200 || !strings.Contains(got[1].Reason, "the stream failed") || got[1].Attempt != 3 || got[1].Attempts != 5 {
		t.Errorf("retries reported: %+v", got)
	}
	for _, r := range got {
		if r.Provider != "anthropic" || strings.Contains(r.Reason, "secret") {
			t.Errorf("retry %+v", r)
		}
	}
}
