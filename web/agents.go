package web

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/analytics"
	"github.com/skilld/skilld/service"
)

type agentsData struct {
	Page *service.AgentPage
	Next string
}

// agentsPage lists agents (agents.list).
func (ui *UI) agentsPage(w http.ResponseWriter, r *http.Request, s *session) {
	page, err := ui.svc.ListAgents(r.Context(), s.actor, service.ListAgentsParams{PageToken: r.URL.Query().Get("page_token")})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	d := agentsData{Page: page}
	if page.NextPageToken != "" {
		d.Next = Prefix + "agents?page_token=" + urlQuery(page.NextPageToken)
	}
	ui.render(w, r, s, http.StatusOK, "agents", "Agents", d)
}

type skillChoice struct {
	ID, Name string
	Selected bool
}

// agentForm is the editor's fields, as the form sends them.
type agentForm struct {
	Name, Instruction, Model, Placement string
	Window, MaxLoaded                   string
	Denied, RequireApproval             string
	Skills                              []string
}

type agentData struct {
	Agent *skilld.Agent // nil for a new agent
	// Catalog is how the agent's catalog fits its budget (nil for a new
	// agent, or when it cannot be told).
	Catalog *service.AgentCatalog
	Form    agentForm
	Skills  []skillChoice
	Error   string
	Saved   bool
	// Stats are what the agent's finished tasks did with each of its
	// skills (skills.stats).
	Stats []analytics.SkillStats
}

func formOf(a *skilld.Agent) agentForm {
	c := a.Config
	f := agentForm{Name: a.Name, Instruction: c.Instruction, Model: c.Model, Placement: c.Context.Placement,
		Denied: strings.Join(c.Tools.Denied, ", "), RequireApproval: strings.Join(c.Tools.RequireApproval, ", ")}
	if c.Context.Window > 0 {
		f.Window = strconv.Itoa(c.Context.Window)
	}
	if c.Context.MaxLoaded > 0 {
		f.MaxLoaded = strconv.Itoa(c.Context.MaxLoaded)
	}
	for _, sk := range a.Skills {
		f.Skills = append(f.Skills, sk.SkillID)
	}
	return f
}

// agentPage shows the editor of a new agent or of agents.get's agent.
func (ui *UI) agentPage(w http.ResponseWriter, r *http.Request, s *session) {
	var d agentData
	if id := r.PathValue("id"); id != "" {
		a, err := ui.svc.GetAgent(r.Context(), s.actor, service.GetAgentParams{AgentRef: service.AgentRef{ID: id}})
		if err != nil {
			ui.fail(w, r, s, err)
			return
		}
		d.Agent, d.Form = a, formOf(a)
		// The fit is a help, not the page: the editor shows without it.
		d.Catalog, _ = ui.svc.AgentCatalog(r.Context(), s.actor, service.AgentCatalogParams{AgentRef: service.AgentRef{ID: id}})
	}
	ui.showAgent(w, r, s, http.StatusOK, d)
}

func (ui *UI) showAgent(w http.ResponseWriter, r *http.Request, s *session, status int, d agentData) {
	// The choice offers the first page of the workspace's skills
	// (skills.list, at most 100).
	page, err := ui.svc.ListSkills(r.Context(), s.actor, service.ListSkillsParams{PageSize: service.MaxPageSize})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	for _, it := range page.Items {
		if it.SkillView != nil {
			d.Skills = append(d.Skills, skillChoice{ID: it.ID, Name: it.Name, Selected: slices.Contains(d.Form.Skills, it.ID)})
		}
	}
	title := "New agent"
	if d.Agent != nil {
		title = d.Agent.Name
		stats, err := ui.svc.SkillStats(r.Context(), s.actor, service.SkillStatsParams{Agent: d.Agent.ID})
		if err != nil {
			ui.fail(w, r, s, err)
			return
		}
		d.Stats = stats.Items
	}
	ui.render(w, r, s, status, "agent", title, d)
}

// saveAgent creates (agents.create) or changes (agents.update) an agent.
func (ui *UI) saveAgent(w http.ResponseWriter, r *http.Request, s *session) {
	f := agentForm{Name: strings.TrimSpace(r.PostFormValue("name")), Instruction: normalizeNewlines(r.PostFormValue("instruction")),
		Model: strings.TrimSpace(r.PostFormValue("model")), Placement: r.PostFormValue("placement"),
		Window: strings.TrimSpace(r.PostFormValue("context_window")), MaxLoaded: strings.TrimSpace(r.PostFormValue("max_loaded")),
		Denied: r.PostFormValue("tools_denied"), RequireApproval: r.PostFormValue("tools_require_approval"), Skills: r.PostForm["skills"]}
	d := agentData{Form: f}
	ctx := r.Context()
	var prev *skilld.Agent
	if id := r.PathValue("id"); id != "" {
		a, err := ui.svc.GetAgent(ctx, s.actor, service.GetAgentParams{AgentRef: service.AgentRef{ID: id}})
		if err != nil {
			ui.fail(w, r, s, err)
			return
		}
		prev, d.Agent = a, a
	}
	window, err := number("context_window", f.Window)
	if err != nil {
		d.Error = errorText(err)
		ui.showAgent(w, r, s, status(err), d)
		return
	}
	maxLoaded, err := number("max_loaded", f.MaxLoaded)
	if err != nil {
		d.Error = errorText(err)
		ui.showAgent(w, r, s, status(err), d)
		return
	}
	// A skill kept attached keeps its pinned version.
	pinned := map[string]int{}
	if prev != nil {
		for _, sk := range prev.Skills {
			pinned[sk.SkillID] = sk.Version
		}
	}
	refs := []service.AgentSkillRef{}
	for _, id := range f.Skills {
		refs = append(refs, service.AgentSkillRef{Skill: id, Version: pinned[id]})
	}
	tools := skilld.ToolPolicy{Denied: globs(f.Denied), RequireApproval: globs(f.RequireApproval)}
	var saved *skilld.Agent
	if prev == nil {
		saved, err = ui.svc.CreateAgent(ctx, s.actor, service.AgentParams{Name: f.Name, Skills: refs, Config: skilld.AgentConfig{
			Instruction: f.Instruction, Model: f.Model, Tools: tools,
			Context: skilld.ContextSettings{Window: window, Placement: f.Placement, MaxLoaded: maxLoaded}}})
	} else {
		// The config is a merge patch of the fields the form shows: the
		// agent's other settings (sandbox, timeout, …) stay as they are.
		patch := map[string]any{
			"instruction": orNull(f.Instruction), "model": orNull(f.Model),
			"tools":   map[string]any{"denied": listOrNull(tools.Denied), "require_approval": listOrNull(tools.RequireApproval)},
			"context": map[string]any{"window": intOrNull(window), "placement": orNull(f.Placement), "max_loaded": intOrNull(maxLoaded)},
		}
		raw, _ := json.Marshal(patch)
		p := service.UpdateAgentParams{AgentRef: service.AgentRef{ID: prev.ID}, Config: raw, Skills: &refs}
		if f.Name != prev.Name {
			p.Name = &f.Name
		}
		saved, err = ui.svc.UpdateAgent(ctx, s.actor, p)
	}
	if err != nil {
		d.Error = errorText(err)
		ui.showAgent(w, r, s, status(err), d)
		return
	}
	http.Redirect(w, r, Prefix+"agents/"+saved.ID, http.StatusSeeOther)
}

func number(field, v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, skilld.Errorf(skilld.EINVALID, "%s must be a whole number, not %q", field, v)
	}
	return n, nil
}

// globs splits a comma-separated list of tool name patterns.
func globs(v string) []string {
	var out []string
	for g := range strings.SplitSeq(v, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func intOrNull(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func listOrNull(l []string) any {
	if len(l) == 0 {
		return nil
	}
	return l
}
