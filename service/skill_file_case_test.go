package service_test

import (
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// pdfFiles is a skill whose SKILL.md spells its reference file in capitals
// while the file is in lower case, as Anthropic's pdf skill does.
var pdfFiles = map[string]string{
	"SKILL.md":             "---\nname: pdf\ndescription: Works with PDF files.\n---\nSee REFERENCE.md and FORMS.md.\n",
	"reference.md":         "# Reference\n",
	"Scripts/Fill_Form.py": "print('fill')\n",
}

// TestGetSkillFileCaseMiss: a path that misses only by letter case is not
// found, with the real name suggested and given to callers through
// CaseOnlyMatch; a path that matches nothing suggests nothing.
func TestGetSkillFileCaseMiss(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{}, nil)
	ctx := t.Context()
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: pdfFiles}))
	ref := service.SkillRef{ID: sk.ID}
	for asked, want := range map[string]string{"REFERENCE.md": "reference.md", "scripts/fill_form.PY": "Scripts/Fill_Form.py", "skill.md": "SKILL.md"} {
		_, err := e.svc.GetSkillFile(ctx, e.viewer, service.GetSkillFileParams{SkillRef: ref, Path: asked})
		wantMessage(t, err, skilld.ENOTFOUND, `file "`+asked+`" not found in version 1 of skill "pdf"; did you mean "`+want+`"?`)
		if got, ok := service.CaseOnlyMatch(err); !ok || got != want {
			t.Errorf("CaseOnlyMatch(%s) = %q, %v; want %q", asked, got, ok, want)
		}
	}
	_, err := e.svc.GetSkillFile(ctx, e.viewer, service.GetSkillFileParams{SkillRef: ref, Path: "FORMS.md"})
	wantMessage(t, err, skilld.ENOTFOUND, `file "FORMS.md" not found in version 1 of skill "pdf"`)
	if _, ok := service.CaseOnlyMatch(err); ok || skilld.ErrorMessage(err) != `file "FORMS.md" not found in version 1 of skill "pdf"` {
		t.Errorf("a plain miss: %v", err)
	}
	if _, ok := service.CaseOnlyMatch(skilld.Errorf(skilld.ENOTFOUND, "other")); ok {
		t.Error("CaseOnlyMatch of another error")
	}
}
