package service

import (
	"context"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/scan"
	"github.com/skilld/skilld/secretkey"
	"github.com/skilld/skilld/signature"
	"github.com/skilld/skilld/store"
)

// Service is skilld's management surface: every operation on workspaces,
// tokens, skills, versions, the catalog, policy and agents, with the rules
// that govern them. Each method takes the Actor on whose behalf it runs and
// checks the actor's role itself, so every adapter (REST, CLI, agent
// toolset) enforces the same rules.
type Service struct {
	db       store.Store
	blobs    blob.Store
	packages *PackageStore
	github   GitHubFetcher
	exec     Executor
	cfg      Config
	auth     authCache
	lists    listCache
	rates    rateLimits
	// admission serializes the starts of a workspace's tasks while its
	// queued cap holds (admitTask).
	admission admission
	// stored remembers the bytes each workspace's tasks keep, for the
	// quota check of a start (checkStorage).
	stored ttlCache[int64]
	// invocations remembers what snapshots read of each package's SKILL.md:
	// who may activate its skill, and its headings.
	invocations invocationCache
	// tokens counts catalogs as the agents' models would (AgentCatalog).
	tokens *tokenizer.Cache
}

// Config holds the service's settings; the zero value is safe.
type Config struct {
	// PathImport allows admins to import skills from server-side folders
	// under these roots. Empty (the default) disables path imports.
	PathImportRoots []string
	// Now returns the current time (tests fix it); default time.Now.
	Now func() time.Time
	// TaskRetention is how long workspaces keep their finished tasks
	// unless they set their own (0, the default: forever); SweepTasks
	// deletes the older ones.
	TaskRetention time.Duration
	// Executor makes the executor that runs started tasks, given the
	// service it runs them for (a run reads packages and acts through
	// it). New calls it once, so a service has its executor from the
	// start and never changes it. Nil: tasks stay queued.
	Executor func(*Service) Executor
	// Rates bound expensive operations per workspace (imports, searches).
	Rates Rates
	// TaskLimits are the caps on each workspace's tasks where the
	// workspace has none of its own (zero: none).
	TaskLimits TaskLimits
	// StorageQuota bounds the bytes the tasks of a workspace without a
	// quota of its own keep (0: none); a workspace at it starts no task.
	StorageQuota int64
	// UsageIndexed, when set, is told of each task the skill usage
	// indexer indexes: its outcome and its rows (for metrics).
	UsageIndexed func(outcome string, rows []store.SkillUsage)
	// Sigstore verifies Sigstore-mode signatures on catalog items against
	// the operator's trusted root; nil: such signatures never verify.
	Sigstore *signature.Verifier
	// Secrets seals and opens workspace secrets; nil: the server keeps
	// none (putting one is EUNAVAILABLE saying how to configure a key).
	Secrets *secretkey.Keyring
}

// GitHubFetcher downloads the chosen skill folders of a GitHub repository
// (see importer.Select for the choice); *importer.GitHub is the real one.
type GitHubFetcher interface {
	Import(ctx context.Context, src importer.Source, skillName string, importAll bool) ([]importer.Candidate, string, error)
}

// New returns a service over the stores. github may be nil, which
// disables GitHub imports.
func New(db store.Store, blobs blob.Store, github GitHubFetcher, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Service{
		db:       db,
		blobs:    blobs,
		packages: &PackageStore{DB: db, Blobs: blobs, Scanner: scan.Default()},
		github:   github,
		cfg:      cfg,
		lists:    newListCache(),
		tokens:   tokenizer.NewCache(),
	}
	if cfg.Executor != nil {
		s.exec = cfg.Executor(s)
	}
	return s
}

// Packages returns the package storage the service uses.
func (s *Service) Packages() *PackageStore { return s.packages }

// Actor is who an operation runs for: resolved from an API token by the
// HTTP layer, or handed to the agent toolset by the runtime.
type Actor struct {
	WorkspaceID   string
	Role          skilld.Role
	InstanceAdmin bool
	// Name identifies the actor in created_by/updated_by fields and events.
	Name    string
	TokenID string
	// tokenWorkspace is the workspace the token belongs to, which In
	// leaves as it is for an instance admin acting elsewhere.
	tokenWorkspace string
}

// can checks that the actor has at least role need in its workspace.
func (a Actor) can(need skilld.Role) error {
	if a.WorkspaceID == "" {
		return skilld.Errorf(skilld.EUNAUTHORIZED, "no workspace: authenticate with a workspace token")
	}
	if !a.Role.Allows(need) && !a.InstanceAdmin {
		return skilld.Errorf(skilld.EFORBIDDEN, "this needs the %s role; the token has the %s role", need, a.Role)
	}
	return nil
}

// Can reports whether the actor holds role need in its workspace (what
// every operation checks first); surfaces use it to refuse a request
// before reading its body.
func (a Actor) Can(need skilld.Role) error { return a.can(need) }

// RequireInstanceAdmin is the check of instance-wide operations.
func (a Actor) RequireInstanceAdmin() error { return a.requireInstanceAdmin() }

// requireInstanceAdmin checks instance-wide rights (workspaces, catalog).
func (a Actor) requireInstanceAdmin() error {
	if !a.InstanceAdmin {
		return skilld.Errorf(skilld.EFORBIDDEN, "this needs an instance-admin token")
	}
	return nil
}

// In returns the actor acting in workspace ws (an ID or a name). A token of
// another workspace gets ENOTFOUND, exactly as for a workspace that does not
// exist: it must not learn which workspaces exist. Instance admins act in
// any workspace as admins.
func (s *Service) In(ctx context.Context, a Actor, ws string) (Actor, error) {
	w, err := s.findWorkspace(ctx, ws)
	if err != nil || (w.ID != a.WorkspaceID && !a.InstanceAdmin) {
		return Actor{}, skilld.Errorf(skilld.ENOTFOUND, "workspace %q not found", ws)
	}
	if w.ID != a.WorkspaceID {
		a.Role = skilld.RoleAdmin
	}
	a.WorkspaceID = w.ID
	return a, nil
}

// event records an audit event; failures to record are not the caller's
// problem, so they are dropped rather than failing the operation that
// already happened.
func (s *Service) event(ctx context.Context, a Actor, ws, kind, subject string) {
	s.db.EventAppend(context.WithoutCancel(ctx), &store.EventAppendParams{WorkspaceID: ws, Kind: kind, Subject: subject, Actor: a.Name})
}

// Page is the paging of list operations: 1-based page numbers.
type Page struct {
	Page     int `json:"page,omitempty" jsonschema:"page number, from 1"`
	PageSize int `json:"page_size,omitempty" jsonschema:"items per page, at most 100 (default 50)"`
}

// Paging limits of the API.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

func (p Page) normalize() (store.Page, Page, error) {
	if p.Page == 0 {
		p.Page = 1
	}
	if p.PageSize == 0 {
		p.PageSize = DefaultPageSize
	}
	if p.Page < 1 {
		return store.Page{}, p, invalidField("page", "page must be 1 or more, got %d", p.Page)
	}
	if p.PageSize < 1 || p.PageSize > MaxPageSize {
		return store.Page{}, p, invalidField("page_size", "page_size must be between 1 and %d, got %d", MaxPageSize, p.PageSize)
	}
	return store.Page{Limit: p.PageSize, Offset: (p.Page - 1) * p.PageSize}, p, nil
}
