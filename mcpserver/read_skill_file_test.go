package mcpserver

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/service"
)

// TestReadSkillFileCase: read_skill_file reads the file a path misses only
// by letter case (the model copied the spelling of the skill's own
// SKILL.md); a path that matches nothing is still not found.
func TestReadSkillFileCase(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.CreateSkill(t.Context(), f.admin, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md":     "---\nname: pdf\ndescription: Works with PDF files.\n---\nRead REFERENCE.md first.\n",
		"reference.md": "# Reference\n",
	}}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, f, f.viewer, Options{})
	out, isErr := call(t, cs, toolReadSkillFile, map[string]any{"skill_name": "pdf", "path": "REFERENCE.md"})
	if isErr || out != "# Reference\n" {
		t.Errorf("read_skill_file pdf REFERENCE.md: %v %q", isErr, out)
	}
	out, isErr = call(t, cs, toolReadSkillFile, map[string]any{"skill_name": "pdf", "path": "FORMS.md"})
	if !isErr || !strings.Contains(out, `skill "pdf" has no file "FORMS.md"; activate_skill lists its files`) {
		t.Errorf("read_skill_file of a missing file: %s", out)
	}
}
