package storeurl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// ErrNoDatabase is the cause of OpenExisting's refusal: the URL names no
// database skilld has set up.
var ErrNoDatabase = errors.New("no skilld database")

// OpenExisting opens a database skilld has already set up, for the
// commands that work on a server's storage rather than create one (an MCP
// client, fsck, a worker): opening an empty one would only make every
// token look invalid and every skill missing. A SQLite file that does not
// exist is refused before anything is created; a database where no
// skilld migration was ever applied is refused too (the only trace left
// is the empty table that records migrations). Both are ENOTFOUND
// wrapping ErrNoDatabase. Otherwise it opens like Open, migrating unless
// opts says not to.
func OpenExisting(ctx context.Context, rawURL string, opts *store.Options) (store.Store, error) {
	scheme, rest, _ := strings.Cut(rawURL, ":")
	if scheme == "sqlite" {
		path, err := sqlitePath(rest)
		if err != nil {
			return nil, skilld.Errorf(skilld.EINVALID, "database URL %q: %v", rawURL, err)
		}
		switch info, err := os.Stat(path); {
		case errors.Is(err, fs.ErrNotExist):
			return nil, noDatabase("no database file at %s", path)
		case err != nil:
			return nil, skilld.Errorf(skilld.EUNAVAILABLE, "database file %s: %w", path, err)
		case info.IsDir():
			return nil, noDatabase("%s is a folder, not a database file", path)
		case info.Size() == 0:
			return nil, noDatabase("database file %s is empty", path)
		}
	}
	check := store.Options{SkipMigrate: true}
	if opts != nil {
		check.CallTimeout = opts.CallTimeout
	}
	s, err := Open(ctx, rawURL, &check)
	if err != nil {
		return nil, err
	}
	migrations, err := s.MigrationStatus(ctx)
	if err == nil && !slices.ContainsFunc(migrations, func(m store.Migration) bool { return m.Applied }) {
		err = noDatabase("the database %s was never set up by skilld", redactedURL(rawURL))
	}
	switch {
	case err != nil:
		return nil, errors.Join(err, s.Close())
	case opts != nil && opts.SkipMigrate:
		return s, nil
	}
	// Reopened to migrate as Open does: the drivers run migrations
	// without the per-call timeout, which a plain Migrate call would not.
	if err := s.Close(); err != nil {
		return nil, err
	}
	return Open(ctx, rawURL, opts)
}

func noDatabase(format string, args ...any) error {
	return &skilld.Error{Code: skilld.ENOTFOUND, Message: fmt.Sprintf(format, args...), Err: ErrNoDatabase}
}

// redactedURL hides the password a database URL may hold.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
