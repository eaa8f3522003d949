package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/deps"
	"github.com/skilld/skilld/skillmd"
)

// ActivateSkill is the name of the activation tool.
const ActivateSkill = "activate_skill"

// activation is a skill active in the run: activated (transcript
// placement, for the rest of the run) or loaded (context placement, until
// it is unloaded).
type activation struct {
	name string
	// content is what the skill shows the model and tokens its size:
	// the activation's result, or its part of <current_context>.
	content string
	tokens  int
	// entries are what the skill rendered, for the load's trace.
	entries []string
	// For Go skills: the skill and this load's context.
	gs *GoSkill
	sc *SkillContext
	// allowed are the skill's pre-approved calls while it is active.
	allowed []allowedTool
}

// activateTool builds activate_skill: its skill_name is an enum of exactly
// the disclosed skills, so the model cannot invent one. A catalog that
// does not list every skill (level some names) has thousands of them: the
// enum would be larger than the catalog's whole budget, so there is none,
// and the name is checked when the tool is called (unknownSkill).
func (r *run) activateTool() *tool.Tool {
	name := &jsonschema.Schema{Type: "string", Description: "the name of the skill to activate, from the list of available skills"}
	if r.cat.level == catalogSomeNames {
		name.Description = "the exact name of the skill to activate: one the list of available skills shows, or search_skills found"
	} else {
		name.Enum = make([]any, len(r.disclosed))
		for i, s := range r.disclosed {
			name.Enum[i] = s.Name
		}
	}
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"skill_name": name,
		},
		Required:             []string{"skill_name"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	return &tool.Tool{
		Name:        ActivateSkill,
		Description: r.res.activateDescription(),
		Schema:      schema,
		Idempotent:  true,
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

// activate runs tier 2 and tier 3 for one skill, as the model asked.
func (r *run) activate(ctx context.Context, name string) (string, error) {
	return r.activateWith(ctx, name, nil)
}

// activateWith activates a skill for the model (inv nil) or for the user
// who invoked it with /name (inv holds the arguments).
func (r *run) activateWith(ctx context.Context, name string, inv *invocation) (string, error) {
	if a := r.active[name]; a != nil {
		return r.res.again(ctx, a), nil
	}
	s, ok := r.byName[name]
	switch {
	case !ok:
		return "", r.unknownSkill(name)
	case s.Withheld != "":
		return "", skilld.Errorf(skilld.EFORBIDDEN, "skill '%s' is withheld by %s", name, s.Withheld)
	case s.NoModelInvocation && inv == nil:
		// Not in the catalog nor the enum: as unknown to the model as a
		// skill that is not attached.
		return "", r.unknownSkill(name)
	}
	entryLimit := int(r.cfg.EntryShare * float64(r.cfg.Window))
	var (
		a          *activation
		pkg        *pack.Package
		summarized bool
		err        error
	)
	if gs := r.goSkills[name]; gs != nil {
		a, err = r.renderGo(gs, entryLimit)
	} else {
		a, pkg, summarized, err = r.renderPackage(ctx, s, entryLimit, inv)
	}
	if err != nil {
		var te *skilld.Error
		if errors.As(err, &te) && te.Code == skilld.ETOOLARGE && a != nil {
			r.emit(ctx, SkillRefused{Skill: name, Reason: te.Message, Tokens: a.tokens})
		}
		return "", err
	}

	unloaded, reason := r.res.admit(a)
	if reason != "" {
		r.emit(ctx, SkillRefused{Skill: name, Reason: reason, Tokens: a.tokens})
		return "", skilld.Errorf(skilld.ETOOLARGE, "Skill '%s' was not loaded: %s", name, reason)
	}

	placed := ""
	if pkg != nil && r.cfg.Sandbox != nil {
		dir := pack.SandboxDir(s.Name, s.ID)
		mat := SkillMaterialized{Skill: name, Dir: dir, Files: pkg.Len()}
		err := r.cfg.Sandbox.Place(ctx, dir, pkg)
		if err != nil {
			// The instructions stand on their own: a skill whose files
			// could not be placed is degraded, not refused.
			mat.Error = errorText(err)
			placed = fmt.Sprintf("\n\nNote: the skill's files could not be placed in %s (%s); work from the instructions.", dir, errorText(err))
		}
		r.emit(ctx, mat)
		if err == nil {
			placed += r.environment(ctx, name, dir, pkg)
		}
	}
	a.allowed, _ = parseAllowedTools(a.allowedEntries(pkg), r.knownTool)
	r.active[name] = a
	r.toolsChanged()
	r.emit(ctx, SkillActivated{Skill: name, Tokens: a.tokens, Placement: r.cfg.Placement, Summarized: summarized, Digest: s.Digest})
	return r.res.activated(ctx, a, unloaded) + placed, nil
}

// allowedEntries are the skill's allowed-tools: a Go skill's own, a
// package skill's from its SKILL.md.
func (a *activation) allowedEntries(pkg *pack.Package) []string {
	if a.gs != nil {
		return a.gs.AllowedTools
	}
	if pkg == nil {
		return nil
	}
	s, _, err := skillmd.Parse(skillData(pkg), skillmd.Options{Lenient: true})
	if err != nil || s == nil {
		return nil
	}
	return s.AllowedTools
}

// renderPackage reads a package skill and makes its entry: the whole
// SKILL.md with the file list, or, above the entry cap, a summary that
// fits the cap (its size, its opening and where the whole file is), or a
// refusal when not even the smallest summary fits.
func (r *run) renderPackage(ctx context.Context, s Skill, limit int, inv *invocation) (*activation, *pack.Package, bool, error) {
	pkg, err := fetchPackage(ctx, r.cfg.Packages, s.Digest, r.cfg.StorageRetry)
	if err != nil {
		return nil, nil, false, fmt.Errorf("skill '%s' is unavailable: %s", s.Name, skilld.ErrorMessage(err))
	}
	dir := pack.SandboxDir(s.Name, s.ID)
	md := substitute(skillText(pkg), inv, dir)
	files := make([]string, 0, pkg.Len())
	for _, e := range pkg.Entries() {
		files = append(files, e.Path)
	}
	sandbox := r.cfg.Sandbox != nil
	a := &activation{name: s.Name, entries: []string{strings.TrimSpace(md)}}
	f := EntryFormat{
		Header: fmt.Sprintf("The skill's files are in %s/ (run its scripts from there with the shell tool):", dir),
		More:   "list them with list_files",
		Where:  func() (string, error) { return "at " + dir + "/SKILL.md", nil },
	}
	if !sandbox {
		f.Header = "The skill's files (not placed: this run has no sandbox):"
		f.Where = func() (string, error) {
			id, err := r.cfg.Outputs.Put(ctx, md)
			if err != nil {
				return "", fmt.Errorf("skill '%s': storing its SKILL.md: %w", s.Name, err)
			}
			return fmt.Sprintf("at read_tool_output id %q", id), nil
		}
	}
	content, tokens, summarized, ok, err := FitEntry(s.Name, md, files, f, limit, r.count)
	if err != nil {
		return nil, nil, false, err
	}
	a.content, a.tokens = content, tokens
	if !ok {
		return a, nil, false, skilld.Errorf(skilld.ETOOLARGE, "Skill '%s' was not loaded: even its shortest summary needs %d tokens, more than the %d allowed for one skill (%.0f%% of the window)",
			s.Name, a.tokens, limit, 100*r.cfg.EntryShare)
	}
	return a, pkg, summarized, nil
}

// renderGo loads a Go skill: a fresh state, its entries rendered from it.
func (r *run) renderGo(gs *GoSkill, limit int) (*activation, error) {
	sc := &SkillContext{Skill: gs.Name, Store: r.store}
	if gs.Init != nil {
		sc.State = gs.Init()
	}
	a := &activation{name: gs.Name, gs: gs, sc: sc}
	r.renderGoContent(a)
	if a.tokens > limit {
		return a, skilld.Errorf(skilld.ETOOLARGE, "Skill '%s' was not loaded: it renders %d tokens, more than the %d allowed for one skill", gs.Name, a.tokens, limit)
	}
	return a, nil
}

// renderGoContent renders a Go skill's entries into its content.
func (r *run) renderGoContent(a *activation) {
	a.entries = nil
	if a.gs.Render != nil {
		a.entries = a.gs.Render(a.sc)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<skill_content name=%q>\n", a.name)
	for _, e := range a.entries {
		b.WriteString(strings.TrimSpace(e))
		b.WriteString("\n\n")
	}
	if len(a.gs.Tools) > 0 {
		names := make([]string, len(a.gs.Tools))
		for i, t := range a.gs.Tools {
			names[i] = t.Name
		}
		fmt.Fprintf(&b, "Its tools: %s.\n", strings.Join(names, ", "))
	}
	b.WriteString("</skill_content>")
	a.content = b.String()
	a.tokens = r.count(a.content)
}

// skillText returns the package's SKILL.md (empty for a package without
// one: its instructions are its files).
func skillText(p *pack.Package) string { return string(skillData(p)) }

// skillData is the package's SKILL.md, not copied.
func skillData(p *pack.Package) []byte {
	for _, f := range p.Files() {
		if pack.IsSkillMD(f.Path) {
			return f.Data
		}
	}
	return nil
}

// environment readies what a placed package's scripts import, when the
// sandbox installs dependencies and the package declares some. It writes
// preparing, then building events while an install prints (progress:
// they are not replayed, see isProgress), then ready or failed, built or
// found built, so that a resumed run writes what the first one did. A
// failure is a note for the model, not a refusal.
func (r *run) environment(ctx context.Context, name, dir string, pkg *pack.Package) string {
	envs, ok := r.cfg.Sandbox.(sandbox.Environments)
	if !ok || len(deps.Needs(pkg)) == 0 {
		return ""
	}
	r.emit(ctx, SkillEnvironment{Skill: name, State: "preparing"})
	env, err := envs.Environment(ctx, dir, pkg, func(p sandbox.EnvironmentProgress) {
		r.emit(ctx, SkillEnvironment{Skill: name, State: "building", ElapsedMS: p.Elapsed.Milliseconds(), Line: p.Line, Lines: p.Lines})
	})
	ev := SkillEnvironment{Skill: name, State: "ready"}
	if env != nil {
		ev.EnvironmentLayer = &EnvironmentLayer{Kinds: env.Kinds, Key: env.Key, Cached: env.Cached, DurationMS: env.Duration.Milliseconds()}
	}
	note := ""
	if err != nil {
		ev.State, ev.Error = "failed", errorText(err)
		if env != nil {
			ev.Output = env.Output
		}
		note = fmt.Sprintf("\n\nNote: the skill's dependencies could not be installed (%s); its scripts may fail to import them.", errorText(err))
	}
	r.emit(ctx, ev)
	return note
}
