// Package bloburl opens a blob.Store from a URL, the one setting an operator
// gives the server:
//
//	file:///var/lib/skilld/blobs
//	s3://bucket/prefix?endpoint=http://127.0.0.1:7070&region=us-east-1
//
// It lives apart from package blob because it imports the drivers, which
// import blob. There is no registry: the schemes are a switch, so what a URL
// can open is visible here and cannot change at run time.
package bloburl

import (
	"context"
	"net/url"
	"os"
	"path/filepath"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/blob/s3blob"
)

// Open opens the store rawURL names. Schemes:
//
//   - file: an absolute path on the local file system (fsblob), no host
//     other than "localhost", no query.
//   - s3: see s3blob.ParseURL; credentials come from the environment.
//
// A malformed URL or an unknown scheme is EINVALID with a message naming
// the URL (credentials redacted) and what is wrong with it.
func Open(ctx context.Context, rawURL string) (blob.Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "blob store URL is not a URL: %v", err)
	}
	switch u.Scheme {
	case "file":
		return openFile(u)
	case "s3":
		cfg, err := s3blob.ParseURL(rawURL, os.Getenv)
		if err != nil {
			return nil, err
		}
		return s3blob.New(ctx, cfg)
	case "":
		return nil, invalid(u, "has no scheme; want file:///ABSOLUTE/PATH or s3://BUCKET/PREFIX")
	default:
		return nil, invalid(u, "has unknown scheme %q; want file or s3", u.Scheme)
	}
}

func openFile(u *url.URL) (blob.Store, error) {
	switch {
	case u.Host != "" && u.Host != "localhost":
		return nil, invalid(u, "names host %q; a file URL must be local: file:///ABSOLUTE/PATH", u.Host)
	case u.Opaque != "":
		return nil, invalid(u, "has a relative path; want file:///ABSOLUTE/PATH")
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return nil, invalid(u, "may hold only a path")
	case u.Path == "" || !filepath.IsAbs(u.Path):
		return nil, invalid(u, "needs an absolute path: file:///ABSOLUTE/PATH")
	}
	s, err := fsblob.New(filepath.Clean(u.Path))
	if err != nil {
		return nil, err
	}
	return s, nil
}

// invalid names the URL with any password redacted.
func invalid(u *url.URL, format string, args ...any) error {
	return skilld.Errorf(skilld.EINVALID, "blob store URL %q "+format, append([]any{u.Redacted()}, args...)...)
}
