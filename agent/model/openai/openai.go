// Package openai is the model adapter for OpenAI-compatible Chat Completions
// (OpenAI itself, Ollama, vLLM, llama.cpp, LM Studio and the proxies that
// speak the same protocol), over the official SDK
// github.com/openai/openai-go/v3. The SDK's types stay in this package.
//
// Answers are always streamed, with stream_options.include_usage so the last
// chunk carries the usage. Retries are the SDK's own: 408, 409, 429, 5xx and
// connection errors (including timeouts set on the HTTP client's transport)
// are retried with exponential backoff (0.5 s doubling, capped at 8 s, with
// jitter), honoring Retry-After in seconds or as an HTTP date (and
// Retry-After-Ms), for up to MaxRetries retries and never past the context;
// Config.OnRetry is told of each retry as it starts.
package openai

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/internal/adapt"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1/"

const provider = "openai"

// Config configures the adapter.
type Config struct {
	// BaseURL is the API root. Empty: DefaultBaseURL. A URL with no path
	// gets /v1/ ("http://localhost:11434" is "http://localhost:11434/v1/");
	// any other path is used as given, with a trailing slash added, so
	// "http://host:8000/v1", ".../v1/" and a proxy's "https://host/api/v1"
	// all work.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	APIKey string
	// Model is the model name used when a Request leaves Model empty.
	Model string
	// HTTPClient is the client requests go through (nil: the SDK's default).
	// Timeouts set on its transport are retried like connection errors.
	HTTPClient *http.Client
	// MaxRetries is the number of retries after the first attempt: 0 means
	// the default (4), negative means none.
	MaxRetries int
	// OnRetry, when set, is told of each retry as it starts.
	OnRetry func(model.Retry)
}

// Model is a model.Model over Chat Completions.
type Model struct {
	client  oai.Client
	model   string
	apiKey  string
	retries int
	onRetry func(model.Retry)
	// completionTokens says to send max_completion_tokens: OpenAI's
	// reasoning models refuse max_tokens, while OpenAI-compatible servers
	// know only max_tokens. So the newer field goes to api.openai.com only.
	completionTokens bool
}

// New returns an adapter for cfg. It makes no request.
func New(cfg Config) (*Model, error) {
	base, err := BaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	retries := adapt.Retries(cfg.MaxRetries)
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		// Always set, so an empty key means no key rather than the SDK
		// falling back to OPENAI_API_KEY behind the caller's back.
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(retries),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	u, _ := url.Parse(base)
	return &Model{
		client:           oai.NewClient(opts...),
		model:            cfg.Model,
		apiKey:           cfg.APIKey,
		retries:          retries,
		onRetry:          cfg.OnRetry,
		completionTokens: u.Hostname() == "api.openai.com",
	}, nil
}

// BaseURL normalizes a base URL as Config.BaseURL describes.
func BaseURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultBaseURL, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", skilld.Errorf(skilld.EINVALID, "openai: base URL %q is not an http(s) URL", s)
	}
	switch {
	case u.Path == "" || u.Path == "/":
		u.Path = "/v1/"
	case !strings.HasSuffix(u.Path, "/"):
		u.Path += "/"
	}
	u.RawPath = ""
	return u.String(), nil
}

// Generate streams the answer to req.
func (m *Model) Generate(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(nil, err)
			return
		}
		rec := &adapt.Recorder{OnRetry: m.onRetry, Provider: provider, MaxAttempts: m.retries + 1, APIKey: m.apiKey}
		stream := m.client.Chat.Completions.NewStreaming(ctx, params, option.WithMiddleware(rec.Middleware))
		defer stream.Close()

		var a assembler
		for stream.Next() {
			text, err := a.add(stream.Current())
			if err != nil {
				yield(nil, err)
				return
			}
			if text != "" && !yield(&model.Chunk{Text: text}, nil) {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(nil, m.failure(ctx, err, rec))
			return
		}
		resp, err := a.response()
		if err != nil {
			yield(nil, err)
			return
		}
		yield(&model.Chunk{Response: resp}, nil)
	}
}

// failure maps what the SDK returned to the model package's error codes.
func (m *Model) failure(ctx context.Context, err error, rec *adapt.Recorder) error {
	f := adapt.Failure{Provider: provider, APIKey: m.apiKey, Err: err, Recorder: rec, Ctx: ctx}
	if apiErr, ok := errorsAs(err); ok {
		f.Status, f.Message = apiErr.StatusCode, apiErr.Message
	} else if msg, ok := streamError(err); ok {
		// An error event inside a 200 stream: the provider failed mid-answer.
		code := skilld.EUNAVAILABLE
		if strings.Contains(msg, "rate limit") || strings.Contains(msg, "rate_limit") {
			code = skilld.ERATELIMITED
		}
		return skilld.Errorf(code, "%s: the stream failed: %s", provider, adapt.Redact(msg, m.apiKey))
	}
	return f.Classify()
}
