package agent

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
)

// caseMiss looks beside a path read_file did not find for files whose
// names differ from it only in letter case. A model spells a skill's file
// as the skill's own text does, which may not be the file's case (the pdf
// skill says REFERENCE.md for its reference.md), and the sandbox's file
// system is case-sensitive. With one such file, actual is its path and the
// caller reads it; with several, the error names them; with none, or when
// the folder cannot be listed, notFound is returned as it was.
func (r *run) caseMiss(ctx context.Context, p string, notFound error) (actual string, err error) {
	rel, cerr := sandbox.CleanPath(p)
	if cerr != nil {
		return "", notFound
	}
	entries, lerr := r.cfg.Sandbox.List(ctx, path.Dir(rel))
	if lerr != nil {
		return "", notFound
	}
	var files []string
	for _, e := range entries {
		if e.Mode.IsRegular() {
			files = append(files, e.Path)
		}
	}
	switch m := pack.CaseMatches(files, rel); len(m) {
	case 0:
		return "", notFound
	case 1:
		return m[0], nil
	default:
		quoted := make([]string, len(m))
		for i, f := range m {
			quoted[i] = fmt.Sprintf("%q", f)
		}
		return "", skilld.Errorf(skilld.ENOTFOUND, "%s; did you mean %s?", skilld.ErrorMessage(notFound), strings.Join(quoted, " or "))
	}
}

// cleanOr is p relative to /workspace, or p itself when it is not a
// workspace path.
func cleanOr(p string) string {
	if rel, err := sandbox.CleanPath(p); err == nil {
		return rel
	}
	return p
}
