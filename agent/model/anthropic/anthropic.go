// Package anthropic is the model adapter for the Anthropic Messages API,
// over the official SDK github.com/anthropics/anthropic-sdk-go/v2. The SDK's
// types stay in this package.
//
// Answers are always streamed and assembled with the SDK's
// Message.Accumulate. Retries are the SDK's own: 408, 409, 429, 5xx (529
// "overloaded" included) and connection errors are retried with exponential
// backoff (0.5 s doubling, capped at 8 s, with jitter), honoring Retry-After
// in seconds or as an HTTP date (and Retry-After-Ms), for up to MaxRetries
// retries and never past the context. Anthropic can also report an
// overloaded or API error as an event inside a stream it has already
// answered 200 to; when that happens before any text was passed on, the
// adapter starts the call again with the same backoff and budget, since the
// caller has seen nothing of the failed attempt. Config.OnRetry is told of
// each retry, of either kind, as it starts.
package anthropic

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/internal/adapt"
)

// DefaultBaseURL is Anthropic's API.
const DefaultBaseURL = "https://api.anthropic.com/"

// DefaultMaxTokens is sent when a Request leaves MaxTokens at 0: the
// Messages API requires max_tokens, and 4096 suits an agent's turns (tool
// calls and short answers) on every current model.
const DefaultMaxTokens = 4096

const provider = "anthropic"

// Config configures the adapter.
type Config struct {
	// BaseURL is the API root. Empty: DefaultBaseURL. The SDK appends
	// "v1/messages", so a trailing "/v1" or "/v1/" is removed: both
	// "https://proxy.example.com" and "https://proxy.example.com/v1" work.
	BaseURL string
	// APIKey authenticates requests; empty sends none (a local proxy).
	APIKey string
	// Model is the model name used when a Request leaves Model empty.
	Model string
	// MaxTokens replaces DefaultMaxTokens (0: the default).
	MaxTokens int
	// HTTPClient is the client requests go through (nil: the SDK's default).
	// Timeouts set on its transport are retried like connection errors.
	HTTPClient *http.Client
	// MaxRetries is the number of retries after the first attempt: 0 means
	// the default (4), negative means none.
	MaxRetries int
	// OnRetry, when set, is told of each retry as it starts.
	OnRetry func(model.Retry)
}

// Model is a model.Model over the Messages API.
type Model struct {
	client    ant.Client
	model     string
	apiKey    string
	maxTokens int
	retries   int
	onRetry   func(model.Retry)
}

// New returns an adapter for cfg. It makes no request.
func New(cfg Config) (*Model, error) {
	base, err := BaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	retries := adapt.Retries(cfg.MaxRetries)
	opts := []option.RequestOption{
		// The provider package reads the environment; the adapter uses
		// exactly its config (no ANTHROPIC_* or profile files behind the
		// caller's back).
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithMaxRetries(retries),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	maxTokens := cfg.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	return &Model{
		client:    ant.NewClient(opts...),
		model:     cfg.Model,
		apiKey:    cfg.APIKey,
		maxTokens: maxTokens,
		retries:   retries,
		onRetry:   cfg.OnRetry,
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
		return "", skilld.Errorf(skilld.EINVALID, "anthropic: base URL %q is not an http(s) URL", s)
	}
	p := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.Path, u.RawPath = p+"/", ""
	return u.String(), nil
}

// Generate streams the answer to req.
func (m *Model) Generate(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		params, opts, err := m.params(req)
		if err != nil {
			yield(nil, err)
			return
		}
		// One recorder for every attempt of the call, the SDK's and the
		// adapter's own: attempts are numbered, reported and budgeted as
		// one sequence of at most m.retries+1.
		rec := &adapt.Recorder{OnRetry: m.onRetry, Provider: provider, MaxAttempts: m.retries + 1, APIKey: m.apiKey}
		for retry := 0; ; retry++ {
			sdkRetries := option.WithMaxRetries(m.retries - rec.Attempts)
			started, again, err := m.attempt(ctx, params, slices.Concat(opts, []option.RequestOption{sdkRetries}), rec, yield)
			if err == nil {
				return
			}
			if started || !again || rec.Attempts > m.retries {
				yield(nil, err)
				return
			}
			rec.Failed(skilld.ErrorMessage(err))
			if adapt.Sleep(ctx, adapt.Backoff(retry)) != nil {
				yield(nil, err)
				return
			}
		}
	}
}

// attempt runs one streamed call. It reports whether any chunk reached the
// consumer, whether the error (if any) is one the SDK could not retry but a
// new call may cure (a failure inside the 200 stream), and the error that
// ended the call; a nil error means the call is over (answered, or the
// consumer stopped reading).
func (m *Model) attempt(ctx context.Context, params ant.MessageNewParams, opts []option.RequestOption, rec *adapt.Recorder, yield func(*model.Chunk, error) bool) (started, again bool, err error) {
	stream := m.client.Messages.NewStreaming(ctx, params, append(opts, option.WithMiddleware(rec.Middleware))...)
	defer stream.Close()

	var msg ant.Message
	stopped := false
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return started, false, skilld.Errorf(skilld.EUNAVAILABLE, "anthropic: malformed stream: %v", err)
		}
		switch ev.Type {
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
				started = true
				if !yield(&model.Chunk{Text: ev.Delta.Text}, nil) {
					return started, false, nil
				}
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		again, err := m.failure(ctx, err, rec)
		return started, again, err
	}
	if !stopped {
		return started, ctx.Err() == nil, skilld.Errorf(skilld.EUNAVAILABLE, "anthropic: the stream ended before message_stop")
	}
	yield(&model.Chunk{Response: response(&msg)}, nil)
	return started, false, nil
}
