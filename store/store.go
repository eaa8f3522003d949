// Package store is the persistence contract of skilld: what the service
// layer asks of a metadata database, and nothing more. It holds no business
// rules; drivers (sqlitestore, pgstore) implement it, and storetest holds
// the one conformance suite every driver must pass.
//
// Methods are named noun-then-verb and take (ctx, *XxxParams) so that a new
// field never changes a signature. They return *skilld.Error values with
// codes: ENOTFOUND when a row is missing, ECONFLICT when a unique constraint
// or an expected version refuses the write, EINVALID for arguments the
// database cannot store. Drivers translate their own errors at this
// boundary, in one place.
package store

import (
	"context"
	"errors"
	"time"
)

// Store is an open metadata database.
type Store interface {
	Querier
	// Tx runs fn in one transaction. It commits when fn returns nil and
	// rolls back when fn returns an error or panics. fn must use only the
	// Querier it is given. Calls to Tx from inside fn are not allowed.
	Tx(ctx context.Context, fn func(q Querier) error) error
	// Migrate applies the migrations not yet applied and returns their
	// versions. Open already calls it unless told not to; running it again
	// applies nothing.
	Migrate(ctx context.Context) ([]int, error)
	// MigrationStatus lists every known migration and whether it is applied.
	MigrationStatus(ctx context.Context) ([]Migration, error)
	Close() error
}

// Migration is one versioned schema change embedded in a driver.
type Migration struct {
	Version int
	Name    string
	Applied bool
}

// Querier is every read and write a driver offers, usable outside a
// transaction (each call is atomic on its own) and inside one.
type Querier interface {
	WorkspaceQueries
	MemberQueries
	TokenQueries
	SkillQueries
	SkillVersionQueries
	PackageQueries
	ScanQueries
	PermissionQueries
	SecretQueries
	CatalogQueries
	InstallQueries
	PolicyQueries
	AgentQueries
	TaskQueries
	EventQueries
	EvalQueries
	SkillUsageQueries
}

// Options tune Open in every driver.
type Options struct {
	// SkipMigrate opens the database without applying migrations (for
	// `skilld migrate --status`).
	SkipMigrate bool
	// CallTimeout bounds each call to a database server (a statement, a
	// transaction's begin and commit), so that a server that hangs makes
	// calls fail as EUNAVAILABLE instead of hanging them; 0 means
	// DefaultCallTimeout. Migrations are not bounded.
	CallTimeout time.Duration
}

// DefaultCallTimeout is Options.CallTimeout's default.
const DefaultCallTimeout = 10 * time.Second

// ErrConflictingSlugs is returned (wrapped in ECONFLICT) when every slug
// suffix from -2 to -999 is taken.
var ErrConflictingSlugs = errors.New("no free slug")

// Page limits applied by every list method.
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// Page is the paging part of list parameters. A zero Limit means
// DefaultPageSize; Limit is capped at MaxPageSize.
type Page struct {
	Limit  int
	Offset int
	// After, when set, is the sort key of the row before the page (a
	// keyset page, Offset ignored): the name for agents, the ID for tasks,
	// the number for versions, "registry\x00name" for catalog items.
	After string
}

// Normalize returns the page with defaults and caps applied.
func (p Page) Normalize() Page {
	if p.Limit <= 0 {
		p.Limit = DefaultPageSize
	}
	p.Limit = min(p.Limit, MaxPageSize)
	p.Offset = max(p.Offset, 0)
	return p
}
