package lint

import (
	"fmt"

	"github.com/skilld/skilld/skillmd"
)

func checkNameFolder(s *skill) []Finding {
	if s.opts.Dir == "" || s.parsed.Name == "" {
		return nil
	}
	if dir := skillmd.NormalizeName(s.opts.Dir); dir != s.parsed.Name {
		return []Finding{{File: s.file, Line: s.keyLine("name"), Message: fmt.Sprintf(
			"name %q differs from its folder %q: agents find a skill by its folder and select it by its name; rename one", s.parsed.Name, s.opts.Dir)}}
	}
	return nil
}
