package web

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/service"
)

type tasksData struct {
	Page   *service.TaskPage
	Agents []*skilld.Agent
	Names  map[string]string
	Next   string
	Error  string
}

// tasksPage lists tasks (tasks.list) with the start form's agents
// (agents.list).
func (ui *UI) tasksPage(w http.ResponseWriter, r *http.Request, s *session) {
	ui.showTasks(w, r, s, http.StatusOK, "")
}

func (ui *UI) showTasks(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	ctx := r.Context()
	page, err := ui.svc.ListTasks(ctx, s.actor, service.ListTasksParams{PageToken: r.URL.Query().Get("page_token")})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	agents, err := ui.svc.ListAgents(ctx, s.actor, service.ListAgentsParams{PageSize: service.MaxPageSize})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	d := tasksData{Page: page, Agents: agents.Items, Names: map[string]string{}, Error: msg}
	for _, a := range agents.Items {
		d.Names[a.ID] = a.Name
	}
	if page.NextPageToken != "" {
		d.Next = Prefix + "tasks?page_token=" + urlQuery(page.NextPageToken)
	}
	ui.render(w, r, s, status, "tasks", "Tasks", d)
}

// startTask starts a task (tasks.start) and opens it.
func (ui *UI) startTask(w http.ResponseWriter, r *http.Request, s *session) {
	t, err := ui.svc.RunTask(r.Context(), s.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: r.PostFormValue("agent")}, Input: r.PostFormValue("input")})
	if err != nil {
		ui.showTasks(w, r, s, status(err), errorText(err))
		return
	}
	http.Redirect(w, r, Prefix+"tasks/"+t.ID, http.StatusSeeOther)
}

// eventView is one log entry as the page lists it.
type eventView struct {
	Seq     int64
	Type    string
	Summary string
}

// request is one model call as the model saw it: the llm.call.started
// event's context object when the run recorded one, else the event's
// older counters.
type request struct {
	Seq       int64
	Iteration string
	Messages  string
	Tools     string
	Estimated string
	Context   *requestContext
}

type requestContext struct {
	Window, Budget, Estimated string
	Catalog                   []pair
	CatalogSkills             string
	Skills                    []skillUse
	Tools                     string
	Messages                  []pair
	// Other keeps members this page does not know yet, shown as they are.
	Other []pair
}

type pair struct{ Key, Value string }

type skillUse struct{ Name, Tokens, Placement string }

type approval struct{ CallID, Tool, Reason string }

type taskData struct {
	Task      *skilld.Task
	Agent     string
	Events    []eventView
	Requests  []request
	Approvals []approval
	LastSeq   int64
	Cut       bool
	// EventsCut and RequestsCut count the earlier entries not listed.
	EventsCut, RequestsCut int
}

// What a task page lists at most: with their one-line summaries and
// context tables these stay well under 100 KB.
const (
	maxShownEvents   = 200
	maxShownRequests = 20
)

// taskPage shows a task (tasks.get) and its log (tasks.events); the
// script follows it live from LastSeq.
func (ui *UI) taskPage(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ref := service.TaskRef{ID: r.PathValue("id")}
	t, err := ui.svc.GetTask(ctx, s.actor, service.GetTaskParams{TaskRef: ref})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	entries, err := ui.svc.TaskEvents(ctx, s.actor, service.TaskEventsParams{TaskRef: ref})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	d := taskData{Task: t, Cut: len(entries) >= 1000}
	if t.AgentID != "" {
		if a, err := ui.svc.GetAgent(ctx, s.actor, service.GetAgentParams{AgentRef: service.AgentRef{ID: t.AgentID}}); err == nil {
			d.Agent = a.Name
		}
	}
	waiting := map[string]approval{}
	for _, e := range entries {
		ev, err := agent.EventOf(e.TaskID, e.Seq, e.CreatedAt, e.Kind, e.Payload)
		if err != nil {
			continue
		}
		d.LastSeq = ev.Seq
		d.Events = append(d.Events, eventView{Seq: ev.Seq, Type: ev.Type, Summary: summary(ev)})
		switch ev.Type {
		case agent.EventLLMCallStarted:
			d.Requests = append(d.Requests, requestOf(ev))
		case agent.EventApprovalRequested:
			id := show(ev.Data["call_id"])
			waiting[id] = approval{CallID: id, Tool: show(ev.Data["tool"]), Reason: show(ev.Data["reason"])}
		case agent.EventApprovalDecided:
			delete(waiting, show(ev.Data["call_id"]))
		}
	}
	// Only the latest events and requests are listed, to keep the page
	// within its size budget however long the run.
	if n := len(d.Events) - maxShownEvents; n > 0 {
		d.Events, d.EventsCut = d.Events[n:], n
	}
	if n := len(d.Requests) - maxShownRequests; n > 0 {
		d.Requests, d.RequestsCut = d.Requests[n:], n
	}
	// The log has the request before the task's status says it waits (the
	// executor sets the status after logging), so a call asked and not yet
	// decided is shown whenever the task is still going, not only once the
	// status has caught up: the refresh that the request's event causes
	// may read the status a moment early, and no later event would fix it.
	if !t.Status.Done() {
		for _, a := range waiting {
			d.Approvals = append(d.Approvals, a)
		}
		sort.Slice(d.Approvals, func(i, j int) bool { return d.Approvals[i].CallID < d.Approvals[j].CallID })
	}
	ui.render(w, r, s, http.StatusOK, "task", "Task "+t.ID, d)
}

// summary is an event's data in one line, cut to keep long logs within
// the page budget.
func summary(ev agent.Event) string {
	data := ev.Data
	if ev.Type == agent.EventLLMCallStarted {
		data = without(data, "context")
	}
	b, _ := json.Marshal(data)
	const limit = 160
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

// without is m without the keys given.
func without(m map[string]any, drop ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(drop, k) {
			out[k] = v
		}
	}
	return out
}

func requestOf(ev agent.Event) request {
	d := ev.Data
	rq := request{Seq: ev.Seq, Iteration: show(d["iteration"]), Messages: show(d["messages"]), Tools: show(d["tools"]), Estimated: show(d["estimated_tokens"])}
	c, ok := d["context"].(map[string]any)
	if !ok {
		return rq
	}
	rc := &requestContext{Window: show(c["window"]), Budget: show(c["budget"]), Estimated: show(c["estimated_tokens"]), Tools: show(c["tools"])}
	if cat, ok := c["catalog"].(map[string]any); ok {
		for _, k := range []string{"level", "tokens"} {
			if v, ok := cat[k]; ok {
				rc.Catalog = append(rc.Catalog, pair{k, show(v)})
			}
		}
		rc.CatalogSkills = show(cat["skills"])
	}
	if sks, ok := c["skills"].([]any); ok {
		for _, s := range sks {
			if m, ok := s.(map[string]any); ok {
				rc.Skills = append(rc.Skills, skillUse{Name: show(m["name"]), Tokens: show(m["tokens"]), Placement: show(m["placement"])})
			}
		}
	}
	if msgs, ok := c["messages"].(map[string]any); ok {
		for _, k := range []string{"sent", "left_out", "left_out_seqs", "summarized"} {
			if v, ok := msgs[k]; ok {
				rc.Messages = append(rc.Messages, pair{k, show(v)})
			}
		}
	}
	known := []string{"window", "budget", "estimated_tokens", "catalog", "skills", "tools", "messages"}
	var other []string
	for k := range c {
		if !slices.Contains(known, k) {
			other = append(other, k)
		}
	}
	slices.Sort(other)
	for _, k := range other {
		rc.Other = append(rc.Other, pair{k, show(c[k])})
	}
	rq.Context = rc
	return rq
}

// cancelTask stops a task (tasks.cancel).
func (ui *UI) cancelTask(w http.ResponseWriter, r *http.Request, s *session) {
	if _, err := ui.svc.CancelTask(r.Context(), s.actor, service.CancelTaskParams{TaskRef: service.TaskRef{ID: r.PathValue("id")}}); err != nil {
		ui.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"tasks/"+r.PathValue("id"), http.StatusSeeOther)
}

// decide approves or denies a waiting call (tasks.approve).
func (ui *UI) decide(w http.ResponseWriter, r *http.Request, s *session) {
	var approved bool
	switch r.PathValue("decision") {
	case "approve":
		approved = true
	case "deny":
	default:
		ui.fail(w, r, s, skilld.Errorf(skilld.ENOTFOUND, "no such decision"))
		return
	}
	id := r.PathValue("id")
	if _, err := ui.svc.DecideApproval(r.Context(), s.actor, service.DecideApprovalParams{TaskRef: service.TaskRef{ID: id}, CallID: r.PathValue("call"), Approved: approved}); err != nil {
		ui.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"tasks/"+id, http.StatusSeeOther)
}
