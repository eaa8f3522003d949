// Package agent is skilld's embeddable agent runtime: it runs a model with
// tools and skills by progressive disclosure. Tier 1: every request carries
// a catalog of the disclosed skills and an activate_skill tool whose
// skill_name is an enum of exactly their names. Tier 2: activating a skill
// reads its SKILL.md from the package pinned in the run's snapshot, sizes it
// with the run's tokenizer and puts it in the transcript within the context
// budgets. Tier 3: the skill's whole package is committed atomically into
// the task's sandbox, where the shell tool runs its scripts.
//
// New(Config) builds an agent; Run streams the events of one task, each
// appended to the task log first.
package agent

import (
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/policy"
	"github.com/skilld/skilld/sandbox"
)

// Defaults, each named for where it comes from (see DESIGN.md).
const (
	// DefaultEntryShare: one activation may take 10% of the window.
	DefaultEntryShare = 0.10
	// DefaultSkillsShare: all activations together may take 30%.
	DefaultSkillsShare = 0.30
	// DefaultCatalogShare: the catalog may take 2% of the window.
	DefaultCatalogShare = 0.02
	// DefaultMaxIterations bounds model calls per task.
	DefaultMaxIterations = 50
	// OffloadThreshold: tool outputs longer than this many characters are
	// stored and replaced by their first OffloadHead and last OffloadTail
	// characters and an id for read_tool_output.
	OffloadThreshold = 8000
	OffloadHead      = 500
	OffloadTail      = 200
	// MaxReadPage is the most one read_tool_output call returns.
	MaxReadPage = 16000
	// MessageOverhead is the tokens counted per message for its framing.
	MessageOverhead = 4
	// DefaultStorageRetry is how long activation waits out unreachable
	// package storage before it reports the skill unavailable.
	DefaultStorageRetry = 30 * time.Second
)

// Placements of activated skills.
const (
	PlacementTranscript = "transcript"
	PlacementContext    = "context"
)

// Counter counts tokens the way the model that meters the run does.
type Counter interface {
	Count(text string) int
}

// Skill is one skill of the run's snapshot: resolved to the exact package
// digest at task start, so nothing changed later alters what the run reads.
type Skill struct {
	ID          string
	Name        string
	Description string
	Digest      string
	// Files lists the package's paths, shown in the catalog so the model
	// knows what a skill brings before activating it.
	Files []string
	// Withheld, when set, is the install policy rule that refuses the
	// skill now: it is not in the catalog and cannot be activated.
	Withheld string
}

// Config is everything a run needs. Model, Window and (when skills are
// attached) Packages are required.
type Config struct {
	Model model.Model
	// ModelName is passed to the provider with every request.
	ModelName   string
	Instruction string
	// Window is the model's context window in tokens.
	Window int
	// MaxTokens caps each model response (0: the adapter's default).
	MaxTokens int

	Skills   []Skill
	Packages Packages
	// Placement is PlacementTranscript (the default).
	Placement   string
	EntryShare  float64
	SkillsShare float64
	// CatalogShare bounds the catalog block.
	CatalogShare float64

	// Tools are extra tools offered besides the built-in ones.
	Tools []*tool.Tool
	// Policy is the effective tool policy.
	Policy policy.Effective
	// Approver decides calls that need approval; without one they are
	// refused.
	Approver Approver

	// Sandbox is where the task's commands run and its files are: the
	// shell and file tools work in it and activated skills are placed in
	// it. Without one there are no shell or file tools and packages are
	// not placed. The caller creates and destroys it.
	Sandbox sandbox.Sandbox
	// SandboxInfo describes the sandbox's provider; the run records it in
	// a sandbox.ready event (with the provider's warning, when it has one).
	SandboxInfo *sandbox.Info

	Tokenizer Counter
	// Outputs stores large tool outputs; an in-memory store by default.
	Outputs Outputs
	// Log receives every message and event; in memory by default.
	Log Log

	MaxIterations int
	StorageRetry  time.Duration
}

// withDefaults validates the config and fills in defaults.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Model == nil:
		return c, skilld.Errorf(skilld.EINVALID, "agent: no model")
	case c.Window <= 0:
		return c, skilld.Errorf(skilld.EINVALID, "agent: the context window is unknown; set it (for example --context-window 128000)")
	case c.Tokenizer == nil:
		return c, skilld.Errorf(skilld.EINVALID, "agent: no tokenizer")
	}
	if len(c.Skills) > 0 && c.Packages == nil {
		return c, skilld.Errorf(skilld.EINVALID, "agent: skills are attached but there is no package source")
	}
	if c.Placement == "" {
		c.Placement = PlacementTranscript
	}
	if c.Placement != PlacementTranscript {
		return c, skilld.Errorf(skilld.EINVALID, "agent: placement %q is not supported yet; use %q", c.Placement, PlacementTranscript)
	}
	if c.EntryShare == 0 {
		c.EntryShare = DefaultEntryShare
	}
	if c.SkillsShare == 0 {
		c.SkillsShare = DefaultSkillsShare
	}
	if c.CatalogShare == 0 {
		c.CatalogShare = DefaultCatalogShare
	}
	if c.MaxIterations == 0 {
		c.MaxIterations = DefaultMaxIterations
	}
	if c.StorageRetry == 0 {
		c.StorageRetry = DefaultStorageRetry
	}
	if c.Outputs == nil {
		c.Outputs = &MemoryOutputs{}
	}
	if c.Log == nil {
		c.Log = &MemoryLog{}
	}
	return c, nil
}
