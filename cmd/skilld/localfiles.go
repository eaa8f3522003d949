package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/skilld/skilld/pack"
)

// This file reads skills from the local disk for the client commands:
// text files for inline creates and edits, archives (or folders zipped in
// memory) for uploads.

// binaryFileError names a file that cannot travel as inline text.
type binaryFileError struct{ path string }

func (e *binaryFileError) Error() string {
	return fmt.Sprintf("%s is not UTF-8 text; inline skills hold text only: use 'skilld skills upload' for skills with binary files", e.path)
}

// readTextFiles reads a skill folder (one argument that is a directory) or
// a list of files (kept under their paths relative to the current folder)
// into the path → text map of an inline create or edit.
func readTextFiles(ctx context.Context, args []string) (map[string]string, error) {
	if len(args) == 1 {
		if info, err := os.Stat(args[0]); err == nil && info.IsDir() {
			pkg, _, err := readLocalDir(ctx, args[0], pack.InlineLimits())
			if err != nil {
				return nil, err
			}
			out := make(map[string]string, pkg.Len())
			for _, f := range pkg.Files() {
				if !isText(f.Data) {
					return nil, &binaryFileError{filepath.Join(args[0], filepath.FromSlash(f.Path))}
				}
				out[f.Path] = string(f.Data)
			}
			return out, nil
		}
	}
	out := make(map[string]string, len(args))
	for _, a := range args {
		rel := filepath.ToSlash(filepath.Clean(a))
		if filepath.IsAbs(a) || rel == ".." || strings.HasPrefix(rel, "../") {
			return nil, fmt.Errorf("%s: give files inside the current folder (their paths there become their paths in the skill), or one folder", a)
		}
		info, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if info.IsDir() {
			return nil, fmt.Errorf("%s is a folder: give one folder alone, or only files", a)
		}
		data, err := os.ReadFile(a)
		if err != nil {
			return nil, err
		}
		if !isText(data) {
			return nil, &binaryFileError{a}
		}
		out[rel] = string(data)
	}
	return out, nil
}

// checkoutError refuses to send a folder that is a git checkout: packages
// keep every dot-file (docs/PACKAGE-FORMAT.md), so the repository's
// history would be stored and materialized with the skill.
type checkoutError struct{ arg, name string }

func (e *checkoutError) Error() string {
	return fmt.Sprintf("%s is a git checkout: its .git folder would be stored in the skill; send the tracked files instead, e.g.\n"+
		"  git -C %s archive --format=zip --prefix=%s/ -o /tmp/%s.zip HEAD && skilld skills upload /tmp/%s.zip",
		e.arg, e.arg, e.name, e.name, e.name)
}

// readLocalDir reads a skill folder the client is about to send, refusing
// a git checkout, and returns its package and absolute path.
func readLocalDir(ctx context.Context, dir string, lim pack.Limits) (*pack.Package, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	if _, err := os.Lstat(filepath.Join(abs, ".git")); err == nil {
		return nil, "", &checkoutError{dir, filepath.Base(abs)}
	}
	pkg, err := pack.ReadDir(ctx, abs, lim)
	return pkg, abs, err
}

// isText accepts valid UTF-8 without NUL bytes: what survives a JSON string
// unchanged and is meant to be read as text.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

// localArchive opens what "upload PATH" sends: an archive file as is, or a
// folder zipped in memory under its own name (so the server checks the
// folder name against the skill name, as 'skilld validate' does).
func localArchive(ctx context.Context, p string) (r io.Reader, size int64, closeFn func(), err error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, 0, nil, err
	}
	if !info.IsDir() {
		f, err := os.Open(p)
		if err != nil {
			return nil, 0, nil, err
		}
		return f, info.Size(), func() { f.Close() }, nil
	}
	pkg, abs, err := readLocalDir(ctx, p, pack.ArchiveLimits())
	if err != nil {
		return nil, 0, nil, err
	}
	data, err := zipPackage(pkg, filepath.Base(abs))
	if err != nil {
		return nil, 0, nil, err
	}
	return bytes.NewReader(data), int64(len(data)), func() {}, nil
}

// zipPackage writes a package as a zip under folder top, keeping exec bits.
func zipPackage(pkg *pack.Package, top string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range pkg.Files() {
		h := &zip.FileHeader{Name: path.Join(top, f.Path), Method: zip.Deflate}
		h.SetMode(0o644)
		if f.Exec {
			h.SetMode(0o755)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// localError reports a problem with local files: a binary file or a git
// checkout is a usage error (the wrong command for the input), anything
// else a failure.
func (c *apiCmd) localError(err error) int {
	be, ce := (*binaryFileError)(nil), (*checkoutError)(nil)
	if errors.As(err, &be) || errors.As(err, &ce) {
		return usageErrorf(c.fs, "%v", err)
	}
	return c.fail(err)
}
