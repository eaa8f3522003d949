package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/units"
	"github.com/skilld/skilld/service"
)

// agentsCommands is the "skilld agents" group.
func agentsCommands() []command {
	return []command{
		{"list", "list the workspace's agents", runAgentsList},
		{"get", "show one agent", runAgentsGet},
		{"create", "create an agent", runAgentsCreate},
		{"update", "change an agent", runAgentsUpdate},
		{"delete", "delete an agent", runAgentsDelete},
	}
}

// agentFlags are the flags create and update share.
type agentFlags struct {
	instruction, model, timeout string
	context                     contextFlags
	skills, items, toolsets     stringList
}

func (f *agentFlags) register(c *apiCmd) {
	c.fs.StringVar(&f.instruction, "instruction", "", "the agent's instruction")
	c.fs.StringVar(&f.model, "model", "", "the model the agent uses")
	c.fs.StringVar(&f.timeout, "timeout", "", "how long one task may run, such as 30m (default: the server's --task-timeout)")
	f.context.register(c.fs)
	c.fs.Var(&f.skills, "skill", "attach a workspace skill, as ID or ID@VERSION to pin it; repeatable")
	c.fs.Var(&f.items, "item", "attach a catalog item (installed first), as REGISTRY/NAME or REGISTRY/NAME@VERSION; repeatable")
	c.fs.Var(&f.toolsets, "toolset", "offer the agent's tasks a toolset: skills (manage the workspace's skills as the task's starter); repeatable")
}

// refs turns the --skill and --item flags into attachments.
func (f *agentFlags) refs(c *apiCmd) ([]service.AgentSkillRef, bool) {
	var out []service.AgentSkillRef
	for _, list := range []struct {
		vals []string
		item bool
	}{{f.skills, false}, {f.items, true}} {
		for _, v := range list.vals {
			ref, version, pinned := strings.Cut(v, "@")
			r := service.AgentSkillRef{Skill: ref}
			if list.item {
				r = service.AgentSkillRef{Item: ref}
			}
			if pinned {
				n, err := strconv.Atoi(version)
				if err != nil || n < 1 {
					usageErrorf(c.fs, "%q: the version after @ must be a positive number", v)
					return nil, false
				}
				r.Version = n
			}
			out = append(out, r)
		}
	}
	return out, true
}

func runAgentsCreate(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "agents create", "NAME [--instruction TEXT] [--model MODEL] [--timeout D] [context flags] [--skill ID[@N]]...\n"+
		"    [--item REGISTRY/NAME[@N]]... [--toolset skills]\n\n"+
		"Context flags: --context-window N, --placement transcript|context, --max-loaded N,\n"+
		"--max-messages N, --entry-share F, --skills-share F, --compaction on|off (the agent's\n"+
		"config.context; see docs/RUNTIME.md).")
	var f agentFlags
	f.register(c)
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	refs, ok := f.refs(c)
	if !ok {
		return exitUsage
	}
	if err := f.context.check(); err != nil {
		return usageErrorf(c.fs, "%s", errorText(err))
	}
	p := service.AgentParams{Name: c.args[0], Config: skilld.AgentConfig{Instruction: f.instruction, Model: f.model, Timeout: f.timeout, Toolsets: f.toolsets}, Skills: refs}
	f.context.apply(given(c.fs), &p.Config.Context)
	ag, ok := call(ctx, c, service.OpAgentsCreate, p)
	if !ok {
		return exitFailure
	}
	return c.printAgent(ctx, ag)
}

// runAgentsUpdate changes what the flags name: the instruction and model
// are edited into the agent's current config (the API replaces the config
// as a whole), and --skill/--item replace the attached skills.
func runAgentsUpdate(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "agents update", "ID [--name NAME] [--instruction TEXT] [--model MODEL] [--timeout D] [context flags] [--skill ID[@N]]...\n"+
		"    [--item REGISTRY/NAME[@N]]... [--toolset T]...\n\n"+
		"Changes only what the flags name; the context flags are those of agents create.")
	var f agentFlags
	f.register(c)
	name := c.fs.String("name", "", "new name")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	refs, ok := f.refs(c)
	if !ok {
		return exitUsage
	}
	if err := f.context.check(); err != nil {
		return usageErrorf(c.fs, "%s", errorText(err))
	}
	p := service.UpdateAgentParams{AgentRef: service.AgentRef{ID: c.args[0]}}
	set := given(c.fs)
	if set("name") {
		p.Name = name
	}
	// The config travels as a merge patch of exactly the flags given:
	// everything else stays as it is on the server, even when another
	// update changes it meanwhile.
	patch := map[string]any{}
	for _, m := range []struct {
		flag, member string
		value        any
	}{{"instruction", "instruction", f.instruction}, {"model", "model", f.model}, {"timeout", "timeout", f.timeout}, {"toolset", "toolsets", f.toolsets}} {
		if set(m.flag) {
			patch[m.member] = m.value
		}
	}
	if cp := f.context.patch(set); len(cp) > 0 {
		patch["context"] = cp
	}
	if len(patch) > 0 {
		b, err := json.Marshal(patch)
		if err != nil {
			return c.fail(err)
		}
		p.Config = b
	}
	if set("skill") || set("item") {
		p.Skills = &refs
	}
	ag, ok := call(ctx, c, service.OpAgentsUpdate, p)
	if !ok {
		return exitFailure
	}
	return c.printAgent(ctx, ag)
}

func runAgentsList(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "agents list", "[--page N] [--page-size N]")
	var p service.ListAgentsParams
	c.fs.IntVar(&p.Page, "page", 1, "page number")
	c.fs.IntVar(&p.PageSize, "page-size", service.DefaultPageSize, "agents per page")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	page, ok := call(ctx, c, service.OpAgentsList, p)
	if !ok {
		return exitFailure
	}
	return c.output(page, func(w io.Writer) {
		row(w, "ID", "NAME", "MODEL", "SKILLS")
		for _, a := range page.Items {
			row(w, a.ID, a.Name, a.Config.Model, len(a.Skills))
		}
		fmt.Fprintf(w, "\n%d agents\n", page.Total)
	})
}

func runAgentsGet(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "agents get", "ID")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	ag, ok := call(ctx, c, service.OpAgentsGet, service.GetAgentParams{AgentRef: service.AgentRef{ID: c.args[0]}})
	if !ok {
		return exitFailure
	}
	return c.printAgent(ctx, ag)
}

// printAgent shows an agent; in the table its skills are named, each
// looked up in the workspace (the API answers their IDs).
func (c *apiCmd) printAgent(ctx context.Context, ag *skilld.Agent) int {
	var names, catalog []string
	if !c.json {
		for _, s := range ag.Skills {
			names = append(names, c.skillName(ctx, s.SkillID))
		}
		catalog = c.catalogRows(ctx, ag.ID)
	}
	return c.output(ag, func(w io.Writer) {
		row(w, "id", ag.ID)
		row(w, "name", ag.Name)
		row(w, "model", ag.Config.Model)
		row(w, "instruction", short(ag.Config.Instruction, 80))
		if cs := contextSummary(ag.Config.Context); cs != "" {
			row(w, "context", cs)
		}
		if ag.Config.Timeout != "" {
			row(w, "timeout", ag.Config.Timeout)
		}
		if len(ag.Config.Toolsets) > 0 {
			row(w, "toolsets", strings.Join(ag.Config.Toolsets, " "))
		}
		for i, s := range ag.Skills {
			pin := "current version"
			if s.Version > 0 {
				pin = fmt.Sprintf("version %d", s.Version)
			}
			row(w, "skill", fmt.Sprintf("%s (%s, %s)", names[i], pin, s.SkillID))
		}
		for _, line := range catalog {
			row(w, "catalog", line)
		}
		for _, d := range ag.Warnings {
			row(w, "warning", d.Message)
		}
		row(w, "updated", when(&ag.UpdatedAt))
	})
}

// catalogRows say how the agent's catalog fits its budget: at each
// window where skills lose part of their entry, which ones; then the
// windows where it fits whole.
func (c *apiCmd) catalogRows(ctx context.Context, id string) []string {
	cat, err := request(ctx, c, service.OpAgentsCatalog, service.AgentCatalogParams{AgentRef: service.AgentRef{ID: id}})
	if err != nil {
		return []string{"(not known: " + skilld.ErrorMessage(err) + ")"}
	}
	if cat.Listed == 0 {
		return nil
	}
	var out, whole []string
	for _, w := range cat.Windows {
		name := units.Window(w.Window)
		if w.Agent {
			name += " (this agent's window)"
		}
		if len(w.Shortened) == 0 && w.Fits {
			whole = append(whole, name)
			continue
		}
		line := fmt.Sprintf("%s: %s, %d of %d skills shortened", name, w.Level, len(w.Shortened)+w.ShortenedMore, cat.Listed)
		if !w.Fits {
			line = fmt.Sprintf("%s: over budget even with names only (%d of %d tokens)", name, w.Tokens, w.Budget)
		}
		if len(w.Shortened) > 0 {
			line += " (" + short(strings.Join(w.Shortened, ", "), 120) + ")"
		}
		out = append(out, line)
	}
	if len(whole) > 0 {
		out = append(out, "whole at "+strings.Join(whole, ", "))
	}
	return out
}

// skillName is the name of a workspace skill, or a note saying why it is
// not known.
func (c *apiCmd) skillName(ctx context.Context, id string) string {
	sk, err := request(ctx, c, service.OpSkillsGet, service.GetSkillParams{SkillRef: service.SkillRef{ID: id}})
	switch {
	case skilld.ErrorCode(err) == skilld.ENOTFOUND:
		return "(deleted)"
	case err != nil:
		return "(name not known: " + skilld.ErrorMessage(err) + ")"
	}
	return sk.Name
}

// contextSummary lists the context settings that are set.
func contextSummary(cs skilld.ContextSettings) string {
	var parts []string
	add := func(cond bool, format string, v any) {
		if cond {
			parts = append(parts, fmt.Sprintf(format, v))
		}
	}
	add(cs.Window > 0, "window %d", cs.Window)
	add(cs.Placement != "", "placement %s", cs.Placement)
	add(cs.MaxLoaded > 0, "max loaded %d", cs.MaxLoaded)
	add(cs.MaxMessages != 0, "max messages %d", cs.MaxMessages)
	add(cs.EntryShare > 0, "entry share %g", cs.EntryShare)
	add(cs.SkillsShare > 0, "skills share %g", cs.SkillsShare)
	if cs.Compaction != nil {
		add(true, "compaction %s", map[bool]string{true: "on", false: "off"}[*cs.Compaction])
	}
	return strings.Join(parts, ", ")
}

func runAgentsDelete(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "agents delete", "ID")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	if _, ok := call(ctx, c, service.OpAgentsDelete, service.DeleteAgentParams{AgentRef: service.AgentRef{ID: c.args[0]}}); !ok {
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "deleted %s\n", c.args[0])
	return exitOK
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
