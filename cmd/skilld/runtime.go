package main

import (
	"context"
	"iter"
	"log/slog"
	"time"

	"github.com/skilld/skilld"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/provider"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// models opens models by reference with provider settings from flags or,
// on the server, the environment (OPENAI_BASE_URL, OPENAI_API_KEY,
// ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY).
type models struct {
	opts   provider.Options
	tokens *tokenizer.Cache
	// encoding, when set, overrides the tokenizer chosen per model.
	encoding string
	// scripted allows scripted:<file> models. A server refuses them unless
	// told otherwise: they read files of the server's file system.
	scripted bool
	// onText, when set, sees each model's text as it streams (skilld run).
	onText func(string)
}

func (m *models) open(ref string) (model.Model, string, error) {
	r, err := model.ParseRef(ref)
	if err != nil {
		return nil, "", err
	}
	if r.Provider == model.ProviderScripted && !m.scripted {
		return nil, "", skilld.Errorf(skilld.EFORBIDDEN, "scripted models are disabled on this server (set SKILLD_ALLOW_SCRIPTED_MODELS=1 for demos and tests)")
	}
	mdl, err := provider.Open(ref, m.opts)
	if err != nil {
		return nil, "", err
	}
	if m.onText != nil {
		mdl = streamingModel{Model: mdl, onText: m.onText}
	}
	return mdl, r.Name, nil
}

// streamingModel hands a model's text to onText as it arrives; the run
// sees the same chunks. It keeps a Resumable model resumable.
type streamingModel struct {
	model.Model
	onText func(string)
}

func (m streamingModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		for c, err := range m.Model.Generate(ctx, req) {
			if err == nil && c != nil && c.Text != "" {
				m.onText(c.Text)
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

func (m streamingModel) Resume(answered int) {
	if r, ok := m.Model.(model.Resumable); ok {
		r.Resume(answered)
	}
}

func (m *models) counter(ref string) (agent.Counter, error) {
	return m.tokens.ForModel(ref, m.encoding)
}

// execOptions are the executor settings of serve and run.
type execOptions struct {
	network, keep bool
	maxRunning    int
	taskTimeout   time.Duration
	outputBudget  int64
	// observer and logger, when set, are the executor's (serve, worker).
	observer executor.Observer
	logger   *slog.Logger
}

// newExecutor builds the local executor the server and `skilld run` share.
// sbx is nil when no sandbox could be opened; sbErr then says why, and
// tasks are refused with it.
func newExecutor(svc *service.Service, db store.Store, blobs blob.Store, sbx *sandboxes, sbErr error, m *models, o execOptions) *executor.Local {
	cfg := executor.Config{
		Service: svc, DB: db, Blobs: blobs, SandboxError: sbErr, AllowNetwork: o.network, KeepSandboxes: o.keep,
		OpenModel: m.open, Tokenizer: m.counter, Window: model.ContextWindow,
		MaxRunning: o.maxRunning, TaskTimeout: o.taskTimeout, OutputBudget: o.outputBudget, Observer: o.observer, Logger: o.logger,
	}
	if sbx != nil {
		cfg.Sandboxes = sbx.Provider
	}
	return executor.New(cfg)
}
