package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
)

// source is one skill on disk named on the command line: a skill directory
// or an archive file. err is set when the argument could not be resolved
// (it does not exist, or a folder holds no skills); missing says it does
// not exist, which commands report as a usage error. dir is the skill's
// folder relative to the argument ("." for the argument itself).
type source struct {
	path    string
	dir     string
	archive bool
	missing bool
	err     error
}

// resolveSources expands one command-line argument: a skill directory, a
// SKILL.md file (meaning its directory), an archive, or a folder searched
// recursively for skills.
func resolveSources(ctx context.Context, arg string) []source {
	info, err := os.Stat(arg)
	if err != nil {
		missing := errors.Is(err, fs.ErrNotExist)
		if missing {
			err = skilld.Errorf(skilld.ENOTFOUND, "Path does not exist: %s", arg)
		}
		return []source{{path: arg, dir: ".", missing: missing, err: err}}
	}
	if !info.IsDir() {
		base := filepath.Base(arg)
		if strings.EqualFold(base, "SKILL.md") {
			return []source{{path: filepath.Dir(arg), dir: "."}}
		}
		return []source{{path: arg, dir: ".", archive: true}}
	}
	dirs, err := skillmd.Discover(ctx, os.DirFS(arg), ".")
	if err != nil {
		return []source{{path: arg, dir: ".", err: err}}
	}
	if len(dirs) == 0 {
		return []source{{path: arg, dir: ".", err: skilld.Errorf(skilld.ENOTFOUND, "no skills found under %s (no folder holds a SKILL.md)", arg)}}
	}
	out := make([]source, len(dirs))
	for i, d := range dirs {
		out[i] = source{path: filepath.Join(arg, filepath.FromSlash(d)), dir: d}
	}
	return out
}

// missingPath returns the first source that names nothing on disk.
func missingPath(sources []source) (source, bool) {
	for _, s := range sources {
		if s.missing {
			return s, true
		}
	}
	return source{}, false
}

// severalSkills describes a folder or archive holding several skills and
// none at its root, naming them, in the words the server uses for such an
// upload; fix says what to do instead.
func severalSkills(arg string, dirs []string, fix string) string {
	return fmt.Sprintf("%s holds %s, not one at its root; %s", arg, pack.DescribeSkills(dirs), fix)
}

// load reads the package of a source with the archive-upload limits, and
// returns the directory name the skill name must match ("" when there is
// none to compare with, as for an archive without a top folder).
func (s source) load(ctx context.Context) (*pack.Package, string, error) {
	if s.err != nil {
		return nil, "", s.err
	}
	if !s.archive {
		abs, err := filepath.Abs(s.path)
		if err != nil {
			return nil, "", err
		}
		p, err := pack.ReadDir(ctx, abs, pack.ArchiveLimits())
		return p, filepath.Base(abs), err
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	p, err := pack.ReadArchive(ctx, f, info.Size(), pack.ArchiveLimits())
	if err != nil {
		return nil, "", err
	}
	return p, p.TopDir(), nil
}

// forEach runs fn on every source with a bounded number of workers and
// returns the results in source order. Reading skills is mostly system calls
// on small files, so two workers per processor keep the processors busy
// while others wait in the kernel (measured: about 10% faster than one).
func forEach[T any](ctx context.Context, sources []source, fn func(context.Context, source) T) []T {
	out := make([]T, len(sources))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(2*runtime.GOMAXPROCS(0), len(sources)) {
		wg.Go(func() {
			for i := range work {
				out[i] = fn(ctx, sources[i])
			}
		})
	}
	for i := range sources {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// reportFlags are the output flags of the commands that report on skills
// on disk (lint, scan): a table by default, --json or --sarif.
type reportFlags struct {
	fs          *flag.FlagSet
	json, sarif *bool
}

func newReportFlags(fs *flag.FlagSet) reportFlags {
	return reportFlags{fs: fs,
		json:  fs.Bool("json", false, "print one JSON array of results, one a skill"),
		sarif: fs.Bool("sarif", false, "print a SARIF 2.1.0 log, for code-scanning tools")}
}

// sources parses the command line into the sources of its PATHs: at least
// one, each existing, and not both --json and --sarif. When ok is false,
// code is the exit code to return.
func (r reportFlags) sources(ctx context.Context, args []string) (sources []source, code int, ok bool) {
	paths, code, ok := parseArgs(r.fs, args)
	if !ok {
		return nil, code, false
	}
	switch {
	case len(paths) == 0:
		return nil, usageErrorf(r.fs, "no PATH given"), false
	case *r.json && *r.sarif:
		return nil, usageErrorf(r.fs, "--json and --sarif cannot be used together"), false
	}
	for _, p := range paths {
		sources = append(sources, resolveSources(ctx, p)...)
	}
	if s, missing := missingPath(sources); missing {
		return nil, usageErrorf(r.fs, "%s does not exist", s.path), false
	}
	return sources, 0, true
}
