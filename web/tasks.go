package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"

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
	// Other holds the rest of the context, one line each.
	Other []pair
}

type pair struct{ Key, Value string }

type skillUse struct{ Name, Tokens, Placement string }

type approval struct{ CallID, Tool, Reason string }

type taskData struct {
	Task  *skilld.Task
	Agent string
	// Conversation is the run as people read it; TurnsCut counts the
	// earlier turns not shown.
	Conversation []*turn
	TurnsCut     int
	Events       []eventView
	Requests     []request
	Approvals    []approval
	LastSeq      int64
	Cut          bool
	// EventsCut and RequestsCut count the earlier entries not listed.
	EventsCut, RequestsCut int
}

// What a task page lists at most: with their one-line summaries and
// context tables, and the conversation's own budget, these stay under
// 100 KB. The raw events are the fewest: the conversation and the API say
// more.
const (
	maxShownEvents   = 100
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
	conv := newConversation(func(src string) template.HTML { return ui.renderMarkdown(src, "") })
	for _, e := range entries {
		ev, err := agent.EventOf(e.TaskID, e.Seq, e.CreatedAt, e.Kind, e.Payload)
		if err != nil {
			continue
		}
		conv.add(ev)
		d.LastSeq = ev.Seq
		d.Events = append(d.Events, eventView{Seq: ev.Seq, Type: ev.Type, Summary: summary(ev)})
		switch p := ev.Payload.(type) {
		case agent.LLMCallStarted:
			d.Requests = append(d.Requests, requestOf(ev.Seq, p))
		case agent.ApprovalRequested:
			waiting[p.CallID] = approval{CallID: p.CallID, Tool: p.Tool, Reason: p.Reason}
		case agent.ApprovalDecided:
			delete(waiting, p.CallID)
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
	shown := map[int64]bool{}
	for _, rq := range d.Requests {
		shown[rq.Seq] = true
	}
	d.Conversation, d.TurnsCut = conv.finish(t, shown)
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

// summary is an event's fields in one line, cut to keep long logs within
// the page budget. A request's context has its own card.
func summary(ev agent.Event) string {
	p := ev.Payload
	if start, ok := p.(agent.LLMCallStarted); ok {
		start.Context = nil
		p = start
	}
	b, _ := json.Marshal(p)
	const limit = 160
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

// requestOf is the card of one model request.
func requestOf(seq int64, p agent.LLMCallStarted) request {
	rq := request{Seq: seq, Iteration: strconv.Itoa(p.Iteration), Messages: strconv.Itoa(p.Messages), Tools: strconv.Itoa(p.Tools), Estimated: strconv.Itoa(p.EstimatedTokens)}
	c := p.Context
	if c == nil {
		return rq
	}
	rc := &requestContext{Window: strconv.Itoa(c.Window), Budget: strconv.Itoa(c.Budget), Estimated: strconv.Itoa(c.EstimatedTokens), Tools: strings.Join(c.Tools, ", ")}
	if cat := c.Catalog; cat != nil {
		rc.Catalog = []pair{{"level", cat.Level}, {"tokens", strconv.Itoa(cat.Tokens)}}
		rc.CatalogSkills = strings.Join(cat.Skills, ", ")
	}
	for _, s := range c.Skills {
		rc.Skills = append(rc.Skills, skillUse{Name: s.Name, Tokens: strconv.Itoa(s.Tokens), Placement: s.Placement})
	}
	m := c.Messages
	ranges := make([]string, len(m.LeftOutSeqs))
	for i, r := range m.LeftOutSeqs {
		ranges[i] = fmt.Sprintf("%d–%d", r[0], r[1])
	}
	rc.Messages = []pair{{"sent", strconv.Itoa(m.Sent)}, {"left_out", strconv.Itoa(m.LeftOut)}, {"left_out_seqs", strings.Join(ranges, ", ")}, {"summarized", show(m.Summarized)}}
	tk := c.Tokens
	rc.Other = []pair{{"placement", c.Placement},
		{"tokens", fmt.Sprintf("current_context %d · messages %d · system %d · tools %d", tk.CurrentContext, tk.Messages, tk.System, tk.Tools)}}
	if len(c.Withheld) > 0 {
		rc.Other = append(rc.Other, pair{"withheld", strings.Join(c.Withheld, ", ")})
	}
	// What the lists leave out, when they are capped.
	for _, more := range []pair{{"withheld_more", strconv.Itoa(c.WithheldMore)}, {"skills_more", strconv.Itoa(c.SkillsMore)}, {"tools_more", strconv.Itoa(c.ToolsMore)}} {
		if more.Value != "0" {
			rc.Other = append(rc.Other, more)
		}
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

// deleteTask deletes a finished task (tasks.delete) once the form's box
// says so, which needs no script under the page's CSP, and shows the
// tasks that are left.
func (ui *UI) deleteTask(w http.ResponseWriter, r *http.Request, s *session) {
	if r.PostFormValue("confirm") != "yes" {
		ui.fail(w, r, s, &skilld.Error{Code: skilld.EINVALID, Message: "tick the box to confirm that the task is to be deleted",
			Details: []skilld.Detail{{Field: "confirm", Message: "not ticked"}}})
		return
	}
	if err := ui.svc.DeleteTask(r.Context(), s.actor, service.DeleteTaskParams{TaskRef: service.TaskRef{ID: r.PathValue("id")}}); err != nil {
		ui.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"tasks", http.StatusSeeOther)
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
