// Package agent is skilld's embeddable agent runtime: it runs a model with
// tools and skills by progressive disclosure. Tier 1: every request carries
// a catalog of the disclosed skills and an activate_skill tool whose
// skill_name is an enum of exactly their names (or, when the catalog's
// budget cannot list them all, some of them, no enum, and a search_skills
// tool that finds the rest). Tier 2: activating a skill
// reads its SKILL.md from the package pinned in the run's snapshot, sizes it
// with the run's tokenizer and puts it in the transcript within the context
// budgets. Tier 3: the skill's whole package is committed atomically into
// the task's sandbox, where the shell tool runs its scripts.
//
// New(Config) builds an agent; Run streams the events of one task, each
// appended to the task log first.
package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/policy"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/skillsearch"
)

// Defaults of a Config's zero fields, and the fixed numbers of a run.
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

	// DefaultMaxLoaded: skills loaded at once in context placement;
	// activating one more unloads the least recently used.
	DefaultMaxLoaded = 3
	// DefaultMaxMessages: transcript messages per request in context
	// placement, where loaded skills live outside the transcript, so
	// old turns can go; transcript placement has no cap by default,
	// since its activations are messages of the transcript.
	DefaultMaxMessages = 60
	// TraceChars: a load's contextChanged entry quotes the first this
	// many characters of each entry the skill renders, so later turns
	// keep a trace of a skill once it is unloaded.
	TraceChars = 200

	// OutputReserve is the share of the window kept for the answer: the
	// effective window is the rest, and no request is sent above it.
	OutputReserve = 0.15
	// CompactAt and WarnAt are shares of the effective window: above the
	// first a request is compacted first, above the second a
	// context.warning event says so, once per cycle.
	CompactAt = 0.75
	WarnAt    = 0.60
	// KeepRecent is how many of the newest messages compaction keeps
	// verbatim.
	KeepRecent = 6
)

// Placements of activated skills.
const (
	PlacementTranscript = skilld.PlacementTranscript
	PlacementContext    = skilld.PlacementContext
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
	// Headings are its SKILL.md's Markdown headings (skillsearch.Headings),
	// which search_skills matches besides the name and description; nil
	// when unknown.
	Headings []string
	// Rank orders the skills a catalog that cannot name them all lists
	// first (higher first; the order given breaks ties): the service
	// ranks pinned skills and those its recent tasks activated most.
	Rank int
	// Withheld, when set, is the install policy rule that refuses the
	// skill now: it is not in the catalog and cannot be activated.
	Withheld string
	// NoModelInvocation keeps the skill out of the catalog and of
	// activate_skill's choices (its SKILL.md says
	// disable-model-invocation, or Codex's agents/openai.yaml disallows
	// implicit invocation): only a user's "/name" input activates it.
	NoModelInvocation bool
	// NoUserInvocation refuses "/name" for the skill (user-invocable:
	// false): only the model activates it.
	NoUserInvocation bool
	// Network and Secrets are what an admin approved of the skill's
	// skilld.yaml: while it is loaded, shell commands may reach these
	// hosts (besides the agent's own) and get these secrets as
	// environment variables (from Config.Secrets). Nothing when unloaded.
	Network []string
	Secrets []string
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
	Packages PackageSource
	// GoSkills are skills defined in Go, offered in the same catalog and
	// activated with the same tool as package skills.
	GoSkills []*GoSkill
	// Store holds the values each run's agent store starts with (none by
	// default). A run keeps its own store, which Go skills write across
	// loads and which the task log records; Store itself is not written.
	Store *KVStore

	// Placement is PlacementTranscript (the default) or
	// PlacementContext.
	Placement   string
	EntryShare  float64
	SkillsShare float64
	// CatalogShare bounds the catalog block.
	CatalogShare float64
	// SkillIndexes, when set, keeps the search_skills indexes of the runs
	// that need one, so that tasks of an agent with thousands of skills
	// share one index; without it each such run builds its own at its
	// first search.
	SkillIndexes *skillsearch.Cache
	// MaxLoaded is how many skills are loaded at once in context
	// placement (default DefaultMaxLoaded).
	MaxLoaded int
	// MaxMessages caps the transcript messages of a request: 0 takes the
	// placement's default (DefaultMaxMessages in context placement, no cap
	// in transcript placement), -1 is no cap.
	MaxMessages int
	// NoCompaction turns compaction off (it is on by default in both
	// placements).
	NoCompaction bool

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

	// Secrets opens the secrets granted to the skills, once per run;
	// without it commands get none.
	Secrets SecretSource
	// NoSkillNetwork, when set, says why the hosts granted to skills are
	// not opened (the server lets no task reach the network); commands
	// run without them and their results say so.
	NoSkillNetwork string

	Tokenizer Counter
	// Outputs stores large tool outputs; each run gets an in-memory
	// store of its own by default.
	Outputs Outputs
	// Log receives every message and event of one task; each run gets an
	// in-memory log of its own by default. Give an agent that runs
	// several tasks at once no Log, or build one agent per task.
	Log Log

	// Gate, when set, is called before each live side effect of the run
	// (a model call, a compaction, a tool call, a wait for approval); the
	// run performs it once Gate returns nil. An error suspends the run: it
	// stops without writing anything more, to be resumed from its log.
	// Executors use it to schedule steps; it is not called while a resumed
	// run replays.
	Gate func(ctx context.Context, s Step) error

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
	// The settings an agent is saved with are checked by the same rules.
	cs := skilld.ContextSettings{Window: c.Window, Placement: c.Placement, MaxLoaded: c.MaxLoaded, MaxMessages: c.MaxMessages,
		EntryShare: c.EntryShare, SkillsShare: c.SkillsShare}
	if err := cs.Check(); err != nil {
		return c, fmt.Errorf("agent: %w", err)
	}
	if c.CatalogShare < 0 || c.CatalogShare > 1 {
		return c, skilld.Errorf(skilld.EINVALID, "agent: the catalog's share must be between 0 and 1, not %g", c.CatalogShare)
	}
	if c.Placement == "" {
		c.Placement = PlacementTranscript
	}
	if c.MaxLoaded == 0 {
		c.MaxLoaded = DefaultMaxLoaded
	}
	switch {
	case c.MaxMessages == 0 && c.Placement == PlacementContext:
		c.MaxMessages = DefaultMaxMessages
	case c.MaxMessages == -1:
		c.MaxMessages = 0
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
	return c, nil
}
