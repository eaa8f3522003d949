package importer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// Limits of one import, from the import source's specification: a 25 MB
// archive (pack.GitHubMaxArchiveSize), at most MaxCandidates SKILL.md
// folders in it, at most MaxPackagesPerImport packages created, each within
// pack.GitHubLimits() (200 files, 10 MB).
const (
	MaxCandidates        = 50
	MaxPackagesPerImport = 10
)

// ErrMultipleSkills (EINVALID) is wrapped by Select's error when a source
// holds several skills and the caller chose none. Its text is the machine
// word the API reports, "multiple_skills_found".
var ErrMultipleSkills = errors.New("multiple_skills_found")

// Candidate is one skill folder found in the repository.
type Candidate struct {
	// Path is the folder in the repository, "" for the root.
	Path string
	// Name is the folder's base name, or the repository name for the root:
	// the directory name a SKILL.md's name must match.
	Name string
	// Package holds the folder's files, relative to the folder, read with
	// pack.GitHubLimits(). Import leaves it nil for candidates it did not
	// select.
	Package *pack.Package
	// SourceURL is https://github.com/OWNER/REPO/tree/REF[/PATH] with the
	// resolved ref: where the files came from, for provenance.
	SourceURL string
}

// Select applies the import selector to the candidates of one source.
//
// With skillName, it returns the one candidate whose Name or Path equals it
// (importAll is then irrelevant); a name that several folders share is an
// EINVALID error asking for the path, a name that none has is ENOTFOUND
// listing the available ones. Without skillName, a single candidate is
// returned as is; several are an EINVALID error wrapping ErrMultipleSkills
// with one Detail per candidate, unless importAll, which returns them all
// as long as there are at most MaxPackagesPerImport (ETOOLARGE otherwise).
func Select(cands []Candidate, skillName string, importAll bool) ([]Candidate, error) {
	if len(cands) == 0 {
		return nil, skilld.Errorf(skilld.ENOTFOUND, "no skill (folder with a SKILL.md) was found")
	}
	if name := strings.Trim(skillName, "/"); name != "" {
		var match []Candidate
		for _, c := range cands {
			if c.Name == name || (c.Path == name && c.Path != "") {
				match = append(match, c)
			}
		}
		switch len(match) {
		case 1:
			return match, nil
		case 0:
			e := skilld.Errorf(skilld.ENOTFOUND, "skill %q not found; available: %s", name, listNames(cands))
			e.Details = candidateDetails(cands)
			return nil, e
		default:
			e := skilld.Errorf(skilld.EINVALID, "%d skill folders are named %q; give the folder path instead: %s",
				len(match), name, listPaths(match))
			e.Details = candidateDetails(match)
			return nil, e
		}
	}
	switch {
	case len(cands) == 1:
		return cands[:1:1], nil
	case !importAll:
		e := skilld.Errorf(skilld.EINVALID,
			"%w: %d skills were found (%s); choose one with skill_name or import them all with import_all",
			ErrMultipleSkills, len(cands), listPaths(cands))
		e.Details = candidateDetails(cands)
		return nil, e
	case len(cands) > MaxPackagesPerImport:
		e := skilld.Errorf(skilld.ETOOLARGE,
			"%d skills were found, more than the %d one import may create; choose one with skill_name or import a narrower folder",
			len(cands), MaxPackagesPerImport)
		e.Details = candidateDetails(cands)
		return nil, e
	}
	// A copy, so that filling in packages later does not write into the
	// caller's slice.
	return append([]Candidate(nil), cands...), nil
}

// candidateDetails lists candidates for API clients: the folder path as the
// field ("." for the root, as an empty field would read as "no field") and
// the name in the message.
func candidateDetails(cands []Candidate) []skilld.Detail {
	d := make([]skilld.Detail, len(cands))
	for i, c := range cands {
		d[i] = skilld.Detail{Field: displayPath(c.Path), Message: fmt.Sprintf("skill %q", c.Name)}
	}
	return d
}

func listPaths(cands []Candidate) string {
	s := make([]string, len(cands))
	for i, c := range cands {
		s[i] = displayPath(c.Path)
	}
	return strings.Join(s, ", ")
}

// listNames shows each candidate by name, with its folder when that says
// more than the name.
func listNames(cands []Candidate) string {
	s := make([]string, len(cands))
	for i, c := range cands {
		s[i] = c.Name
		if c.Path != c.Name {
			s[i] += " (" + displayPath(c.Path) + ")"
		}
	}
	return strings.Join(s, ", ")
}

func displayPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}
