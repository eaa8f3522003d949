package lint

import (
	"path"
	"path/filepath"
	"strings"
)

// Report is the findings on one skill, as skilld lint prints them.
type Report struct {
	// Path is the skill as found from the command line: its folder, an
	// archive, or "ARCHIVE!/FOLDER" for one of several skills in an
	// archive.
	Path string `json:"path"`
	// Name is the skill's name, when its SKILL.md could be read.
	Name     string    `json:"name,omitempty"`
	Findings []Finding `json:"findings"`
	// Archive says that Path is an archive file holding the skill at its
	// root, so that its files are located inside it ("x.zip!/SKILL.md").
	Archive bool `json:"-"`
}

// Location is where a finding is, as a relative path with slashes: the
// skill's folder joined with the file, or the skill itself.
func (r Report) Location(f Finding) string {
	base := filepath.ToSlash(r.Path)
	switch {
	case f.File == "":
		return base
	case r.Archive:
		return base + "!/" + f.File
	}
	loc := path.Join(base, f.File)
	if strings.HasSuffix(f.File, "/") {
		loc += "/" // a folder's finding; path.Join drops the slash
	}
	return loc
}
