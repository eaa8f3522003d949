// Package scaffold writes new skills: the SKILL.md skilld init starts an
// author with, valid as it is and saying what to replace.
package scaffold

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/skillmd"
)

// PlaceholderDescription is the description of a new skill whose author
// gave none: valid, long enough and saying when to use the skill, so that
// only skilld lint's description-placeholder rule asks for it to be
// replaced.
func PlaceholderDescription(name string) string {
	return fmt.Sprintf("TODO replace this placeholder with what %s does and when to use it. Use when the user asks for %s.", name, name)
}

const body = `# %[1]s

TODO: the instructions the model follows once it activates this skill: the
steps, in order, and how to check the result before it is done.

Keep this file short (under about 5,000 tokens): it is loaded whole when the
skill is activated. Put the rest in files beside it, and say here when to
read or run each one:

- ` + "`scripts/`" + `: programs the model runs. Start each with a #! line and make it
  executable (chmod +x), or say here which interpreter runs it.
- ` + "`references/`" + `: documents the model reads when a step needs them. Link each
  from this file; a reference should not send the model to further files.
- ` + "`assets/`" + `: templates, images and other files the skill's output uses.

Check the skill with ` + "`skilld lint %[1]s`" + ` and ` + "`skilld validate %[1]s`" + `.
`

// SkillMD returns the SKILL.md of a new skill: the name, the description
// (PlaceholderDescription when empty), and a body that explains the
// layout of a skill. A name or description the specification refuses is
// an EINVALID error naming every problem.
func SkillMD(name, description string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	description = strings.TrimSpace(description)
	if description == "" {
		description = PlaceholderDescription(name)
	}
	// Plain YAML when it reads back as written, else quoted: a name such
	// as "123" or a description with ": " in it must stay a string.
	render := func(quote bool) ([]byte, *skillmd.Report) {
		data := fmt.Appendf(nil, "---\nname: %s\ndescription: %s\n---\n\n"+body, yamlString(name, quote), yamlString(description, quote), name)
		return data, skillmd.Check(data, skillmd.Options{Dir: name})
	}
	same := func(r *skillmd.Report) bool {
		return r.Valid() && r.Skill.Name == name && r.Skill.Description == description
	}
	if data, r := render(false); same(r) {
		return data, nil
	}
	data, r := render(true)
	if err := r.Err(); err != nil {
		return nil, err
	}
	if !same(r) {
		return nil, skilld.Errorf(skilld.EINTERNAL, "scaffold: the SKILL.md written for %q does not read back as written", name)
	}
	return data, nil
}

func yamlString(s string, quote bool) string {
	if !quote {
		return s
	}
	// A JSON string is a YAML double-quoted scalar.
	b, _ := json.Marshal(s)
	return string(b)
}

// checkName refuses a name the specification does not allow, or one that
// normalizing would change (the folder must bear the name exactly).
func checkName(name string) error {
	if name == "" {
		return skilld.Errorf(skilld.EINVALID, "a skill name is required")
	}
	if n := skillmd.NormalizeName(name); n != name {
		return skilld.Errorf(skilld.EINVALID, "skill name %q is not in its normal form; use %q", name, n)
	}
	if p := skillmd.NameProblems(name); len(p) > 0 {
		return skilld.Errorf(skilld.EINVALID, "%s", strings.Join(p, "; "))
	}
	return nil
}

// Create makes the folder name in dir with the SKILL.md SkillMD returns,
// and returns the path of that file. A folder or file of that name already
// there is an ECONFLICT error; on any error nothing is left behind.
func Create(dir, name, description string) (string, error) {
	data, err := SkillMD(name, description)
	if err != nil {
		return "", err
	}
	folder := filepath.Join(dir, name)
	if err := os.Mkdir(folder, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", skilld.Errorf(skilld.ECONFLICT, "%s already exists; choose another name or folder", folder)
		}
		return "", fmt.Errorf("creating the skill's folder: %w", err)
	}
	file := filepath.Join(folder, "SKILL.md")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		// The folder is ours: Mkdir made it just now.
		os.Remove(file)
		os.Remove(folder)
		return "", fmt.Errorf("writing %s: %w", file, err)
	}
	return file, nil
}
