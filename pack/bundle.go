package pack

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
