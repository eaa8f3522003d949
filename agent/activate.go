package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/pack"
)

// ActivateSkill is the name of the activation tool.
const ActivateSkill = "activate_skill"

// activation is a skill active in the run.
type activation struct {
	// recorded is set once the activation's result is in the transcript.
	recorded bool
}

// summaryOpening is how much of an oversized SKILL.md its summary quotes.
const summaryOpening = 1500

// activateTool builds activate_skill: its skill_name is an enum of exactly
// the disclosed skills, so the model cannot invent one.
func (r *run) activateTool() *tool.Tool {
	names := make([]any, len(r.disclosed))
	for i, s := range r.disclosed {
		names[i] = s.Name
	}
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"skill_name": {Type: "string", Enum: names, Description: "the name of the skill to activate, from the list of available skills"},
		},
		Required:             []string{"skill_name"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	return &tool.Tool{
		Name:        ActivateSkill,
		Description: "Load a skill's instructions and place its files in the working directory. Call it before working on a task a skill covers.",
		Schema:      schema,
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			var p struct {
				SkillName string `json:"skill_name"`
			}
			if err := json.Unmarshal(args, &p); err != nil || p.SkillName == "" {
				return "", skilld.Errorf(skilld.EINVALID, "activate_skill needs {\"skill_name\": \"…\"}")
			}
			return r.activate(ctx, p.SkillName)
		},
	}
}

// activate runs tier 2 and tier 3 for one skill.
func (r *run) activate(ctx context.Context, name string) (string, error) {
	if _, ok := r.active[name]; ok {
		return fmt.Sprintf("Skill '%s' is already active: its instructions are earlier in this conversation.", name), nil
	}
	s, ok := r.byName[name]
	switch {
	case !ok:
		return "", skilld.Errorf(skilld.ENOTFOUND, "skill '%s' is not attached to this agent", name)
	case s.Withheld != "":
		return "", skilld.Errorf(skilld.EFORBIDDEN, "skill '%s' is withheld by %s", name, s.Withheld)
	}
	pkg, err := fetchPackage(ctx, r.cfg.Packages, s.Digest, r.cfg.StorageRetry)
	if err != nil {
		return "", fmt.Errorf("skill '%s' is unavailable: %s", name, skilld.ErrorMessage(err))
	}
	md := skillText(pkg)
	dir := pack.SandboxDir(s.Name, s.ID)
	files := make([]string, 0, pkg.Len())
	for _, e := range pkg.Entries() {
		files = append(files, e.Path)
	}

	entryLimit := int(r.cfg.EntryShare * float64(r.cfg.Window))
	content := skillEntry(s.Name, md, dir, files, r.cfg.Sandbox != nil)
	tokens := r.count(content)
	summarized := false
	if tokens > entryLimit {
		where := dir + "/SKILL.md"
		if r.cfg.Sandbox == nil {
			id, err := r.cfg.Outputs.Put(ctx, md)
			if err != nil {
				return "", fmt.Errorf("skill '%s': storing its SKILL.md: %w", name, err)
			}
			where = fmt.Sprintf("read_tool_output id %q", id)
		}
		content = skillSummary(s.Name, md, r.count(md), entryLimit, where, dir, files, r.cfg.Sandbox != nil)
		tokens = r.count(content)
		summarized = true
	}
	skillsLimit := int(r.cfg.SkillsShare * float64(r.cfg.Window))
	if r.activeTokens+tokens > skillsLimit {
		reason := fmt.Sprintf("it needs %d tokens and only %d of the %d-token skills budget are left", tokens, skillsLimit-r.activeTokens, skillsLimit)
		r.emit(ctx, EventSkillRefused, map[string]any{"skill": name, "reason": reason, "tokens": tokens})
		return "", skilld.Errorf(skilld.ETOOLARGE, "Skill '%s' was not loaded: %s", name, reason)
	}

	placed := ""
	if r.cfg.Sandbox != nil {
		data := map[string]any{"skill": name, "dir": dir, "files": len(files)}
		if err := r.cfg.Sandbox.Place(ctx, dir, pkg); err != nil {
			// The instructions stand on their own: a skill whose files
			// could not be placed is degraded, not refused.
			data["error"] = errorText(err)
			placed = fmt.Sprintf("\n\nNote: the skill's files could not be placed in %s (%s); work from the instructions above.", dir, errorText(err))
		}
		r.emit(ctx, EventSkillMaterialized, data)
	}
	r.active[name] = &activation{}
	r.activeTokens += tokens
	r.emit(ctx, EventSkillActivated, map[string]any{"skill": name, "tokens": tokens, "placement": r.cfg.Placement, "summarized": summarized, "digest": s.Digest})
	return content + placed, nil
}

// skillText returns the package's SKILL.md (empty for a package without
// one: its instructions are its files).
func skillText(p *pack.Package) string {
	for _, f := range p.Files() {
		if pack.IsSkillMD(f.Path) {
			return string(f.Data)
		}
	}
	return ""
}

func fileList(dir string, files []string, sandbox bool) string {
	var b strings.Builder
	if sandbox {
		fmt.Fprintf(&b, "The skill's files are in %s/ (run its scripts from there with the shell tool):\n", dir)
	} else {
		b.WriteString("The skill's files (not placed: this run has no sandbox):\n")
	}
	for _, f := range files {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	return b.String()
}

func skillEntry(name, md, dir string, files []string, sandbox bool) string {
	return fmt.Sprintf("<skill_content name=%q>\n%s\n\n%s</skill_content>", name, strings.TrimSpace(md), fileList(dir, files, sandbox))
}

func skillSummary(name, md string, mdTokens, limit int, where, dir string, files []string, sandbox bool) string {
	opening := []rune(md)
	if len(opening) > summaryOpening {
		opening = append(opening[:summaryOpening], []rune(" …")...)
	}
	return fmt.Sprintf("<skill_content name=%q>\nThis skill's SKILL.md is %d tokens, more than the %d allowed for one skill, so only its opening is shown. Read the whole file at %s before following it.\n\n%s\n\n%s</skill_content>",
		name, mdTokens, limit, where, string(opening), fileList(dir, files, sandbox))
}
