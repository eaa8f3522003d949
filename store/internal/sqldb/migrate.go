package sqldb

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/skilld/skilld/store"
)

type migration struct {
	version int
	name    string
	sql     string
}

// readMigrations reads the driver's migration files and orders them by the
// version in their names ("0001_init.sql"), refusing gaps and duplicates,
// which would otherwise surface as a half-migrated database in production.
func readMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		sql := string(b)
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: name must be NNNN_description.sql", name)
		}
		ms = append(ms, migration{version: v, name: rest, sql: sql})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration versions must be 1, 2, 3… without gaps; found %d at position %d", m.version, i+1)
		}
	}
	return ms, nil
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at TEXT NOT NULL
)`

// Migrate applies every migration not yet applied, each in its own
// transaction together with its schema_migrations row, so a failure leaves
// the database at the last complete version.
func (s *Store) Migrate(ctx context.Context) ([]int, error) {
	var applied []int
	for _, m := range s.migrations {
		var done bool
		err := s.tx(ctx, func(q *Queries) error {
			if q.d.MigrationLock != "" {
				if _, err := q.c.Exec(ctx, q.d.MigrationLock); err != nil {
					return fmt.Errorf("lock: %w", err)
				}
			}
			if _, err := q.c.Exec(ctx, createMigrationsTable); err != nil {
				return err
			}
			var n int
			if err := q.c.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				done = true
				return nil
			}
			if _, err := q.c.Exec(ctx, m.sql); err != nil {
				return err
			}
			if step := afterMigration(m.version); step != nil {
				if err := step(ctx, q); err != nil {
					return err
				}
			}
			_, err := q.c.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, now().Format("2006-01-02T15:04:05.000000Z"))
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
		}
		if !done {
			applied = append(applied, m.version)
		}
	}
	return applied, nil
}

// MigrationStatus lists the driver's migrations and which are applied.
func (s *Store) MigrationStatus(ctx context.Context) ([]store.Migration, error) {
	if _, err := s.db.Exec(ctx, createMigrationsTable); err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	rows, err := s.db.Query(ctx, `SELECT version FROM schema_migrations`)
	versions, err := collect(rows, err, scanValue[int])
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	out := make([]store.Migration, len(s.migrations))
	for i, m := range s.migrations {
		out[i] = store.Migration{Version: m.version, Name: m.name, Applied: slices.Contains(versions, m.version)}
	}
	return out, nil
}

// afterMigration is the Go step that completes a migration whose data SQL
// cannot compute, run in the migration's transaction.
func afterMigration(version int) func(context.Context, *Queries) error {
	switch version {
	case 5:
		return backfillSkeletons
	}
	return nil
}

// backfillSkeletons gives existing skills their name skeleton, oldest
// first; a skill confusable with an older one of its workspace keeps NULL
// rather than failing the migration, and only new names are held to the
// rule.
func backfillSkeletons(ctx context.Context, q *Queries) error {
	rows, err := q.c.Query(ctx, `SELECT id, workspace_id, name FROM skills ORDER BY created_at, id`)
	type skill struct{ id, ws, name string }
	skills, err := collect(rows, err, func(r Row) (skill, error) {
		var s skill
		return s, r.Scan(&s.id, &s.ws, &s.name)
	})
	if err != nil {
		return err
	}
	for _, s := range skills {
		sk := store.NameSkeleton(s.name)
		if _, err := q.c.Exec(ctx, `UPDATE skills SET name_skeleton = ? WHERE id = ?
			AND NOT EXISTS (SELECT 1 FROM skills o WHERE o.workspace_id = ? AND o.name_skeleton = ?)`,
			sk, s.id, s.ws, sk); err != nil {
			return fmt.Errorf("skeleton of skill %q: %w", s.id, err)
		}
	}
	return nil
}
