package skilltools_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/skilltools"
)

// TestGetFileCase: skills_get_file reads the file a path misses only by
// letter case and says which file it read; a path that matches nothing is
// still not found.
func TestGetFileCase(t *testing.T) {
	f := newFixture(t, skilld.RoleViewer)
	sk, err := f.svc.CreateSkill(t.Context(), f.root, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md":     "---\nname: pdf\ndescription: Works with PDF files.\n---\nRead REFERENCE.md first.\n",
		"reference.md": "# Reference\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	var content skilltools.FileContent
	if err := f.call(t, "skills_get_file", map[string]any{"id": sk.ID, "path": "REFERENCE.md"}, &content); err != nil ||
		content.Path != "reference.md" || content.Content != "# Reference\n" {
		t.Errorf("skills_get_file REFERENCE.md: %+v %v", content, err)
	}
	err = f.call(t, "skills_get_file", map[string]any{"id": sk.ID, "path": "FORMS.md"}, nil)
	if skilld.ErrorCode(err) != skilld.ENOTFOUND || !strings.Contains(err.Error(), `file "FORMS.md" not found`) {
		t.Errorf("a missing file: %v", err)
	}
}
