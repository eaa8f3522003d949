// Package storeurl opens a metadata store from a URL, the one setting an
// operator gives the server:
//
//	sqlite:///var/lib/skilld/skilld.db     (absolute path)
//	sqlite:data/skilld.db                   (path relative to the working directory)
//	postgres://user:pass@host:5432/skilld?sslmode=require
//
// It lives apart from package store because it imports the drivers. The
// schemes are a switch, not a registry.
package storeurl

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/pgstore"
	"github.com/skilld/skilld/store/sqlitestore"
)

// Open opens (and, unless opts says not to, migrates) the store rawURL
// names. A malformed URL or unknown scheme is EINVALID naming what is wrong.
func Open(ctx context.Context, rawURL string, opts *store.Options) (store.Store, error) {
	scheme, rest, ok := strings.Cut(rawURL, ":")
	if !ok || scheme == "" {
		return nil, skilld.Errorf(skilld.EINVALID, "database URL %q has no scheme; want sqlite:///PATH or postgres://…", rawURL)
	}
	switch scheme {
	case "sqlite":
		path, err := sqlitePath(rest)
		if err != nil {
			return nil, skilld.Errorf(skilld.EINVALID, "database URL %q: %v", rawURL, err)
		}
		return sqlitestore.Open(ctx, path, opts)
	case "postgres", "postgresql":
		return pgstore.Open(ctx, rawURL, opts)
	default:
		return nil, skilld.Errorf(skilld.EINVALID, "database URL has unknown scheme %q; want sqlite or postgres", scheme)
	}
}

// sqlitePath accepts "///abs/path", "//localhost/abs/path" and "rel/path".
func sqlitePath(rest string) (string, error) {
	if !strings.HasPrefix(rest, "//") {
		if rest == "" {
			return "", errors.New("no file path")
		}
		return rest, nil
	}
	u, err := url.Parse("sqlite:" + rest)
	if err != nil {
		return "", err
	}
	switch {
	case u.Host != "" && u.Host != "localhost":
		return "", errors.New("names host " + u.Host + "; write sqlite:///ABSOLUTE/PATH or sqlite:RELATIVE/PATH")
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "", errors.New("may hold only a path")
	case u.Path == "" || u.Path == "/":
		return "", errors.New("no file path")
	}
	return u.Path, nil
}
