package pack

import "bytes"

// Assemble returns the package as it is deployed: p itself if it has a root
// SKILL.md (any ASCII case; a packaged SKILL.md wins over text stored beside
// it), otherwise a new package with SKILL.md holding skillText added.
//
// The new package is built with zero Limits: p already passed the limits of
// its source, and the skill text has limits of its own where it is stored,
// so adding one file must not make a stored skill undeployable. The path and
// collision rules still apply, so a package with a "skill.md/" folder is
// refused rather than silently shadowed.
func Assemble(p *Package, skillText []byte) (*Package, error) {
	for _, f := range p.files {
		if IsSkillMD(f.Path) {
			return p, nil
		}
	}
	if skillText == nil {
		skillText = []byte{}
	}
	files := append(p.Files(), File{Path: "SKILL.md", Data: skillText})
	q, err := New(files, Limits{})
	if err != nil {
		return nil, err
	}
	q.topDir = p.topDir
	return q, nil
}

// WithFile returns p with f in place of the file at f.Path (p when the
// bytes and mode are the same). Like Assemble it builds with zero Limits:
// a stored skill whose SKILL.md is rewritten (a new name) stays storable.
func (p *Package) WithFile(f File) (*Package, error) {
	files := p.Files()
	found := false
	for i, old := range files {
		if old.Path == f.Path {
			if bytes.Equal(old.Data, f.Data) && old.Exec == f.Exec {
				return p, nil
			}
			files[i], found = f, true
		}
	}
	if !found {
		files = append(files, f)
	}
	q, err := New(files, Limits{})
	if err != nil {
		return nil, err
	}
	q.topDir = p.topDir
	return q, nil
}
