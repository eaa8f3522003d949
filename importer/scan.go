package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
)

// repoArchive is a downloaded GitHub archive: a tar.gz whose entries all sit
// below one top folder ("owner-repo-sha/"), after a pax global header.
type repoArchive struct {
	src  Source
	ref  string
	data []byte
}

// walk runs pack.WalkTarGz over the archive and hands fn each entry's path
// below the top folder (the top folder itself is not reported).
func (a *repoArchive) walk(ctx context.Context, fn func(p string, e pack.TarEntry) error) error {
	var top string
	var final error // an error that already names the repository
	err := pack.WalkTarGz(ctx, bytes.NewReader(a.data), pack.MaxCompressionRatio, func(e pack.TarEntry) error {
		first, rest, _ := strings.Cut(e.Path, "/")
		if top == "" {
			top = first
		}
		if first != top || first == "" || (rest == "" && e.Type != pack.TarDir) {
			final = &skilld.Error{Code: skilld.EINVALID, Err: pack.ErrBadArchive, Message: fmt.Sprintf(
				"the GitHub archive of %s is not laid out as expected: entry %q is not inside the one top folder that GitHub archives have",
				a.repo(), e.Path)}
			return final
		}
		if rest == "" {
			return nil
		}
		final = fn(rest, e)
		return final
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return canceled(a.repo(), ctx.Err())
	case final != nil:
		return final
	}
	// Errors of the walker itself (a corrupt stream, a bomb) do not know
	// which download they are about.
	var se *skilld.Error
	if errors.As(err, &se) {
		return &skilld.Error{Code: se.Code, Message: "the GitHub archive of " + a.repo() + ": " + se.Message,
			Details: se.Details, Err: err}
	}
	return skilld.Errorf(skilld.EINVALID, "the GitHub archive of %s: %w", a.repo(), err)
}

func (a *repoArchive) repo() string { return a.src.Owner + "/" + a.src.Repo }

// findSkills is the first pass: headers only. It returns the skill folders
// that a.src covers, sorted by path, without packages, and the folders that
// own their files in the second pass: the candidates, plus, for a blob URL
// to the root SKILL.md, the other skill folders the root skill leaves out.
func (a *repoArchive) findSkills(ctx context.Context) ([]Candidate, []string, error) {
	scope := a.src.Path
	exists := scope == ""
	dirs := map[string]bool{} // folders holding a SKILL.md, in scope
	var outer string          // the outermost skill folder enclosing scope, for the hint
	var rootOuter bool        // the root is a skill and scope is inside it
	var hidden int            // SKILL.md files in skipped folders, for the hint
	err := a.walk(ctx, func(p string, e pack.TarEntry) error {
		if !exists && within(p, scope) {
			exists = true
		}
		dir, base := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		if e.Type != pack.TarFile || skillmd.Filename(func(n string) bool { return n == base }) == "" {
			return nil
		}
		switch {
		case within(dir, scope):
			// A name git would never produce ("..", a backslash) in the
			// covered folder refuses the import rather than being guessed at.
			if err := pack.CheckPath(p); err != nil {
				return skilld.Errorf(skilld.EINVALID, "the GitHub archive of %s holds an unusable skill path: %w", a.repo(), err)
			}
			if skippedBelow(dir, scope) {
				hidden++
				return nil
			}
			dirs[dir] = true
		case dir == "":
			rootOuter = true
		case within(scope, dir) && (outer == "" || len(dir) < len(outer)):
			outer = dir
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	where := fmt.Sprintf("%s at %s", a.repo(), quoteRef(a.ref))
	if !exists {
		e := skilld.Errorf(skilld.ENOTFOUND, "folder %q not found in %s", scope, where)
		e.Details = []skilld.Detail{{Field: "path", Message: scope}}
		return nil, nil, e
	}
	var paths []string
	owners := outermost(dirs, scope)
	if a.src.Kind != KindBlob {
		paths = owners
	} else if dirs[scope] {
		paths = []string{scope}
		if scope != "" {
			owners = paths
		}
	}
	if len(paths) == 0 {
		if outer == "" && rootOuter {
			outer = "."
		}
		return nil, nil, a.noSkills(where, outer, hidden)
	}
	if len(paths) > MaxCandidates {
		in := where
		if scope != "" {
			in = fmt.Sprintf("folder %q of %s", scope, where)
		}
		return nil, nil, skilld.Errorf(skilld.ETOOLARGE,
			"%s holds %d skill folders (with a SKILL.md), more than the %d one import may consider; import a narrower folder with a tree URL",
			in, len(paths), MaxCandidates)
	}
	cands := make([]Candidate, len(paths))
	for i, p := range paths {
		name := path.Base(p)
		if p == "" {
			name = a.src.Repo
		}
		cands[i] = Candidate{Path: p, Name: name, SourceURL: treeURL(a.src, a.ref, p)}
	}
	return cands, owners, nil
}

// noSkills explains an empty result and points at what would work.
func (a *repoArchive) noSkills(where, outer string, hidden int) error {
	scope := a.src.Path
	var e *skilld.Error
	if scope == "" {
		e = skilld.Errorf(skilld.ENOTFOUND, "no SKILL.md found in %s", where)
	} else if a.src.Kind == KindBlob {
		e = skilld.Errorf(skilld.ENOTFOUND, "folder %q in %s holds no SKILL.md", scope, where)
	} else {
		e = skilld.Errorf(skilld.ENOTFOUND, "folder %q in %s holds no SKILL.md, and no skill folder is below it", scope, where)
	}
	if outer != "" {
		e.Message += fmt.Sprintf("; it is part of the skill folder %q, import that instead", outer)
	}
	if hidden > 0 {
		e.Message += fmt.Sprintf("; %d SKILL.md file(s) in version-control or node_modules folders were not searched, use a tree URL that points into them", hidden)
	}
	e.Details = []skilld.Detail{{Field: "path", Message: displayPath(scope)}}
	return e
}

// readSkills is the second pass: it reads the files of the chosen
// candidates only, each into its own package. owners are all the skill
// folders found: one that was not chosen still keeps its files out of a
// chosen root skill's package.
func (a *repoArchive) readSkills(ctx context.Context, owners []string, chosen []Candidate) error {
	lim := pack.GitHubLimits()
	type collected struct {
		c     *Candidate // nil for a candidate that was not chosen
		files []pack.File
		total int64
	}
	byPath := make(map[string]*collected, len(owners))
	for _, p := range owners {
		byPath[p] = &collected{}
	}
	for i := range chosen {
		c := &chosen[i]
		if c.Path != "" {
			if err := pack.CheckPath(c.Path); err != nil {
				return skillError(a.repo(), c.Path, err)
			}
		}
		byPath[c.Path] = &collected{c: c}
	}
	err := a.walk(ctx, func(p string, e pack.TarEntry) error {
		// The nearest enclosing candidate owns the entry.
		var col *collected
		rel := p
		for d := p; ; {
			if col = byPath[d]; col != nil {
				if d != "" {
					rel = strings.TrimPrefix(strings.TrimPrefix(p, d), "/")
				}
				break
			}
			if d == "" {
				return nil
			}
			d = parentDir(d)
		}
		if col.c == nil || rel == "" {
			return nil // not chosen, or the folder entry of the skill itself
		}
		e.Path = rel // so that the walker's own errors name the path in the skill
		if err := pack.CheckPath(rel); err != nil {
			return skillError(a.repo(), col.c.Path, err)
		}
		if e.Type == pack.TarDir {
			return nil
		}
		if err := e.Unsupported(); err != nil {
			return skillError(a.repo(), col.c.Path, err)
		}
		// Refuse from the declared size, before reading the data.
		if len(col.files) >= lim.MaxFiles {
			return skillError(a.repo(), col.c.Path, &skilld.Error{Code: skilld.ETOOLARGE, Err: pack.ErrTooManyFiles,
				Message: fmt.Sprintf("more than %d files, the limit per imported skill", lim.MaxFiles)})
		}
		if e.Size > lim.MaxTotalSize-col.total {
			return skillError(a.repo(), col.c.Path, &skilld.Error{Code: skilld.ETOOLARGE, Err: pack.ErrTooLarge,
				Message: fmt.Sprintf("over the %s limit per imported skill", sizeLimit(lim.MaxTotalSize))})
		}
		data, err := e.ReadData()
		if err != nil {
			return skillError(a.repo(), col.c.Path, err)
		}
		col.files = append(col.files, pack.File{Path: rel, Data: data, Exec: e.Mode&0o111 != 0})
		col.total += e.Size
		return nil
	})
	if err != nil {
		return err
	}
	for _, col := range byPath {
		if col.c == nil {
			continue
		}
		p, err := pack.New(col.files, lim)
		if err != nil {
			return skillError(a.repo(), col.c.Path, err)
		}
		col.c.Package = p
	}
	return nil
}

// skillError names the skill folder and repository in a package error,
// keeping its code, details and sentinel.
func skillError(repo, dir string, err error) error {
	var se *skilld.Error
	if !errors.As(err, &se) {
		return err
	}
	where := fmt.Sprintf("skill folder %q in %s", dir, repo)
	if dir == "" {
		where = "the skill at the root of " + repo
	}
	return &skilld.Error{Code: se.Code, Message: where + ": " + se.Message, Details: se.Details, Err: err}
}

// within reports whether p is dir or below it; every path is within "".
func within(p, dir string) bool {
	return dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

// parentDir is the folder holding p, "" at the top.
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// skippedBelow reports whether dir, below scope, passes through a folder
// skillmd.SkipDir leaves out (version-control metadata, node_modules): the
// folders `skilld validate` does not search either. Folders above scope do
// not count: a tree URL may point into one.
func skippedBelow(dir, scope string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(dir, scope), "/")
	if rel == "" {
		return false
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if skillmd.SkipDir(seg) {
			return true
		}
	}
	return false
}

// outermost drops every folder that lies inside another one of dirs: a
// SKILL.md in a skill's examples belongs to that skill. The repository root
// is the exception: a SKILL.md there makes the root a skill of its own but
// does not swallow the skill folders elsewhere in the repository (a
// collection may describe itself with a SKILL.md); the root's package is
// then the repository minus those folders. A tree URL's folder that is a
// skill is taken whole: the user pointed at it.
func outermost(dirs map[string]bool, scope string) []string {
	var out []string
	for d := range dirs {
		nested := false
		for a := d; a != scope && a != ""; {
			a = parentDir(a)
			if a != "" && dirs[a] {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// treeURL is the github.com page of a folder at ref.
func treeURL(src Source, ref, dir string) string {
	u := "https://github.com/" + src.Owner + "/" + src.Repo + "/tree/" + escapeRef(ref)
	if dir != "" {
		for seg := range strings.SplitSeq(dir, "/") {
			u += "/" + url.PathEscape(seg)
		}
	}
	return u
}
