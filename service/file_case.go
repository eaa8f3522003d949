package service

import (
	"errors"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// FileCaseMiss is the cause of GetSkillFile's ENOTFOUND when the path asked
// for differs from one of the version's files only in letter case (or
// Unicode normalization). A skill's own text may spell a file that way:
// Anthropic's pdf skill says REFERENCE.md for its reference.md.
type FileCaseMiss struct {
	// Path is the path asked for; File the version's file it misses.
	Path, File string
}

func (m *FileCaseMiss) Error() string {
	return fmt.Sprintf("%q differs from the file %q only in case", m.Path, m.File)
}

// CaseOnlyMatch returns the file a GetSkillFile error missed only by case.
// The REST API and the web UI only suggest it (the error says "did you
// mean"); the tools a model calls read it instead, because the model
// copied the spelling from the skill's own text and has no better name to
// try.
func CaseOnlyMatch(err error) (string, bool) {
	var m *FileCaseMiss
	if errors.As(err, &m) {
		return m.File, true
	}
	return "", false
}

// fileMiss is the ENOTFOUND for a path that is not among a version's
// files, suggesting the file it misses only by case. A package holds no
// two paths that differ only in case, so there is at most one.
func fileMiss(skill string, list *SkillFiles, path string) error {
	paths := make([]string, len(list.Files))
	for i, f := range list.Files {
		paths[i] = f.Path
	}
	err := skilld.Errorf(skilld.ENOTFOUND, "file %q not found in version %d of skill %q", path, list.Version, skill)
	if m := pack.CaseMatches(paths, path); len(m) == 1 {
		err.Message += fmt.Sprintf("; did you mean %q?", m[0])
		err.Err = &FileCaseMiss{Path: path, File: m[0]}
	}
	return err
}
