package skillmd

import (
	"context"
	"io/fs"
	"path"
	"strings"
)

// Discover returns the skill directories under root in fsys, in lexical
// order: every directory holding a SKILL.md (or skill.md) file. It does not
// look inside a skill it found (a skill's own references may contain
// SKILL.md examples), nor inside hidden directories or node_modules. Root
// itself is returned when it is a skill.
func Discover(ctx context.Context, fsys fs.FS, root string) ([]string, error) {
	var found []string
	var walk func(dir string) error
	walk = func(dir string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return err
		}
		names := make(map[string]bool, len(entries))
		for _, e := range entries {
			if e.Type().IsRegular() {
				names[e.Name()] = true
			}
		}
		if Filename(func(n string) bool { return names[n] }) != "" {
			found = append(found, dir)
			return nil
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" {
				continue
			}
			if err := walk(path.Join(dir, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	return found, nil
}
