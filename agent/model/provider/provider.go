// Package provider opens a model.Model from a model reference
// ("openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5", "scripted:demo.json").
// It lives apart from package model because it imports the adapters, which
// import model.
package provider

import (
	"net/http"
	"os"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/anthropic"
	"github.com/skilld/skilld/agent/model/openai"
)

// Options configure the adapter Open creates. Empty fields are defaulted
// from the environment (the variables the providers' own tools use):
//
//	openai:    OPENAI_API_KEY, OPENAI_BASE_URL
//	anthropic: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
//
// and then from the adapter's defaults (the provider's public API, 4
// retries). They are ignored for scripted models.
type Options struct {
	BaseURL    string
	APIKey     string
	HTTPClient *http.Client
	// MaxRetries: 0 is the default (4), negative is none.
	MaxRetries int
	// OnRetry, when set, is told of each retry of a model call as it
	// starts (see model.Retry).
	OnRetry func(model.Retry)
	// Getenv reads the environment (nil: os.Getenv); a server that keeps
	// its configuration elsewhere, or a test, sets it.
	Getenv func(string) string
}

// Open parses ref and returns the model it names. The model name in the
// reference is the adapter's default for requests that leave
// Request.Model empty. Talking to a provider's public API without an API
// key is refused here, before any request, with EUNAUTHORIZED; servers at
// another base URL (Ollama, vLLM, a proxy) may need none.
func Open(ref string, opts Options) (model.Model, error) {
	r, err := model.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	switch r.Provider {
	case model.ProviderOpenAI:
		key, base := orEnv(opts.APIKey, getenv, "OPENAI_API_KEY"), orEnv(opts.BaseURL, getenv, "OPENAI_BASE_URL")
		if err := needKey(r, key, base, openai.BaseURL, openai.DefaultBaseURL, "OPENAI_API_KEY"); err != nil {
			return nil, err
		}
		m, err := openai.New(openai.Config{BaseURL: base, APIKey: key, Model: r.Name, HTTPClient: opts.HTTPClient, MaxRetries: opts.MaxRetries, OnRetry: opts.OnRetry})
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return m, nil
	case model.ProviderAnthropic:
		key, base := orEnv(opts.APIKey, getenv, "ANTHROPIC_API_KEY"), orEnv(opts.BaseURL, getenv, "ANTHROPIC_BASE_URL")
		if err := needKey(r, key, base, anthropic.BaseURL, anthropic.DefaultBaseURL, "ANTHROPIC_API_KEY"); err != nil {
			return nil, err
		}
		m, err := anthropic.New(anthropic.Config{BaseURL: base, APIKey: key, Model: r.Name, HTTPClient: opts.HTTPClient, MaxRetries: opts.MaxRetries, OnRetry: opts.OnRetry})
		if err != nil {
			return nil, err
		}
		return m, nil
	case model.ProviderScripted:
		f, err := os.Open(r.Name)
		if err != nil {
			return nil, skilld.Errorf(skilld.EINVALID, "model %s: %v", r, err)
		}
		defer f.Close()
		s, err := model.LoadScript(f)
		if err != nil {
			return nil, skilld.Errorf(skilld.EINVALID, "model %s: %s", r, skilld.ErrorMessage(err))
		}
		return s, nil
	}
	// ParseRef accepts only the providers above.
	return nil, skilld.Errorf(skilld.EINTERNAL, "model %s: provider not wired", r)
}

func orEnv(v string, getenv func(string) string, name string) string {
	if v != "" {
		return v
	}
	return getenv(name)
}

// needKey refuses a missing API key for the provider's own API: every
// request would fail with 401 after a round trip.
func needKey(r model.Ref, key, base string, normalize func(string) (string, error), public, env string) error {
	if key != "" {
		return nil
	}
	u, err := normalize(base)
	if err != nil {
		return err
	}
	if u == public {
		return skilld.Errorf(skilld.EUNAUTHORIZED, "model %s: no API key (set %s or pass one explicitly)", r, env)
	}
	return nil
}
