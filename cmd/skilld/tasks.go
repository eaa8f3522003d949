package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
)

// tasksCommands is the "skilld tasks" group: tasks run on the server, and
// these commands start, watch and steer them.
func tasksCommands() []command {
	return []command{
		{"start", "start a task of an agent (--follow to watch it)", runTasksStart},
		{"list", "list the workspace's tasks, newest first", runTasksList},
		{"get", "show one task", runTasksGet},
		{"follow", "show a task's events as they happen, until it ends", runTasksFollow},
		{"approve", "let a tool call waiting for approval run (admins)", runTasksDecide(true)},
		{"deny", "refuse a tool call waiting for approval (admins)", runTasksDecide(false)},
		{"cancel", "stop a task", runTasksCancel},
		{"delete", "delete a finished task with its log and stored outputs", runTasksDelete},
	}
}

func runTasksStart(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tasks start", "AGENT INPUT [--follow] [--deny GLOB]... [--allow GLOB]... [--require-approval GLOB]...\n\n"+
		"Starts a task of the agent (its ID or name) on the server, with INPUT as what it is\n"+
		"asked to do (- reads it from standard input), and prints the task. With --follow it\n"+
		"shows the task's events as they happen instead, as tasks follow does, and exits 0\n"+
		"when the task completes and 1 when it fails or is cancelled. The tool flags add a\n"+
		"task-level tool policy, which can only narrow the workspace's and the agent's.")
	follow := c.fs.Bool("follow", false, "show the task's events until it ends (with --json: one JSON line each)")
	verbose := verboseFlag(c.fs)
	var tools skilld.ToolPolicy
	c.fs.Var((*stringList)(&tools.Denied), "deny", "refuse the tools this glob matches, such as 'shell*'; repeatable")
	c.fs.Var((*stringList)(&tools.Allowed), "allow", "offer only the tools the globs match; repeatable")
	c.fs.Var((*stringList)(&tools.RequireApproval), "require-approval", "pause for approval before calls of the tools this glob matches; repeatable")
	if code, ok := c.parse(args, 2, 2); !ok {
		return code
	}
	input := c.args[1]
	if input == "-" {
		if c.e.stdin == nil {
			return usageErrorf(c.fs, "INPUT is -, but there is no standard input to read")
		}
		b, err := io.ReadAll(c.e.stdin)
		if err != nil {
			return c.fail(err)
		}
		input = string(b)
	}
	if strings.TrimSpace(input) == "" {
		return usageErrorf(c.fs, "give the task's input as one argument (quote it)")
	}
	p := service.StartTaskParams{AgentRef: service.AgentRef{ID: c.args[0]}, Input: input}
	if len(tools.Denied)+len(tools.Allowed)+len(tools.RequireApproval) > 0 {
		p.Tools = &tools
	}
	t, ok := call(ctx, c, service.OpTasksStart, p)
	if !ok {
		return exitFailure
	}
	if !*follow {
		return c.printTask(ctx, t)
	}
	if !c.json {
		fmt.Fprintf(e.stderr, "task: %s (%s)\n", t.ID, describeStatus(t))
	}
	return c.follow(ctx, t.ID, *verbose)
}

func runTasksList(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tasks list", "[--agent AGENT] [--status STATUS] [--page N] [--page-size N]")
	var p service.ListTasksParams
	c.fs.StringVar(&p.Agent, "agent", "", "only the tasks of this agent (ID or name)")
	status := c.fs.String("status", "", "only tasks in this status: queued, running, waiting_for_approval, completed, failed or cancelled")
	c.fs.IntVar(&p.Page, "page", 1, "page number")
	c.fs.IntVar(&p.PageSize, "page-size", service.DefaultPageSize, "tasks per page")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	p.Status = skilld.TaskStatus(*status)
	page, ok := call(ctx, c, service.OpTasksList, p)
	if !ok {
		return exitFailure
	}
	var names map[string]string
	if !c.json {
		names = c.agentNames(ctx)
	}
	return c.output(page, func(w io.Writer) {
		row(w, "ID", "AGENT", "STATUS", "CREATED", "INPUT")
		for _, t := range page.Items {
			row(w, t.ID, cmp.Or(names[t.AgentID], t.AgentID), describeStatus(t), when(&t.CreatedAt), short(t.Input, 50))
		}
		fmt.Fprintf(w, "\n%d tasks\n", page.Total)
	})
}

func runTasksGet(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tasks get", "ID")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	t, ok := call(ctx, c, service.OpTasksGet, service.GetTaskParams{TaskRef: service.TaskRef{ID: c.args[0]}})
	if !ok {
		return exitFailure
	}
	return c.printTask(ctx, t)
}

func runTasksFollow(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tasks follow", "ID\n\n"+
		"Shows the task's events as they happen (with --json: one JSON line each, as the\n"+
		"server sends them) until the task has ended and every event was shown. A dropped\n"+
		"connection is resumed after the last event shown, so none is shown twice. Exits 0\n"+
		"when the task completed, 1 when it failed or was cancelled.")
	verbose := verboseFlag(c.fs)
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	return c.follow(ctx, c.args[0], *verbose)
}

// runTasksDecide answers a call waiting for approval.
func runTasksDecide(approved bool) func(context.Context, *env, []string) int {
	verb, done := "approve", "approved"
	if !approved {
		verb, done = "deny", "denied"
	}
	return func(ctx context.Context, e *env, args []string) int {
		c := newAPICmd(e, "tasks "+verb, "ID CALL\n\n"+
			"CALL is the call_id of the tool call waiting for approval (tasks get and tasks\n"+
			"follow show it).")
		if code, ok := c.parse(args, 2, 2); !ok {
			return code
		}
		p := service.DecideApprovalParams{TaskRef: service.TaskRef{ID: c.args[0]}, CallID: c.args[1], Approved: approved}
		t, ok := call(ctx, c, service.OpTasksApprove, p)
		if !ok {
			return exitFailure
		}
		fmt.Fprintf(e.stderr, "%s call %s of task %s\n", done, p.CallID, t.ID)
		return c.printTask(ctx, t)
	}
}

func runTasksCancel(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tasks cancel", "ID")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	t, ok := call(ctx, c, service.OpTasksCancel, service.CancelTaskParams{TaskRef: service.TaskRef{ID: c.args[0]}})
	if !ok {
		return exitFailure
	}
	return c.printTask(ctx, t)
}

func runTasksDelete(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tasks delete", "ID [--yes]\n\n"+
		"Deletes a finished task with its log and its stored outputs, for good (workspace\n"+
		"admins, and the member whose token started it). A task still queued, running or\n"+
		"waiting for approval is refused: cancel it first. On a terminal it asks before\n"+
		"deleting, unless --yes; from a script it does not ask, as other deletes do not.")
	yes := c.fs.Bool("yes", false, "delete without asking")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	id := c.args[0]
	if !*yes && e.interactive && e.stdin != nil && !ask(e, bufio.NewReader(e.stdin), "delete task "+id+" with its log and stored outputs?") {
		fmt.Fprintln(e.stderr, "not deleted")
		return exitFailure
	}
	if _, ok := call(ctx, c, service.OpTasksDelete, service.DeleteTaskParams{TaskRef: service.TaskRef{ID: id}}); !ok {
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "deleted task %s\n", id)
	return exitOK
}

// printTask shows a task. In the table its agent is named and, when it
// waits for approval, the calls waiting are listed with the commands that
// answer them.
func (c *apiCmd) printTask(ctx context.Context, t *skilld.Task) int {
	agentName := t.AgentID
	var waiting []agent.ApprovalRequested
	if !c.json {
		if ag, err := request(ctx, c, service.OpAgentsGet, service.GetAgentParams{AgentRef: service.AgentRef{ID: t.AgentID}}); err == nil {
			agentName = ag.Name + " (" + ag.ID + ")"
		}
		if t.Status == skilld.TaskWaitingForApproval {
			waiting = c.pendingApprovals(ctx, t.ID)
		}
	}
	return c.output(t, func(w io.Writer) {
		row(w, "id", t.ID)
		row(w, "agent", agentName)
		row(w, "status", describeStatus(t))
		row(w, "input", short(t.Input, 80))
		if t.Output != "" {
			row(w, "output", short(t.Output, 200))
		}
		if t.Error != nil {
			row(w, "error", t.Error.Code+": "+t.Error.Message)
		}
		if u := t.Usage; u.TotalTokens > 0 {
			row(w, "tokens", fmt.Sprintf("%d (%d prompt, %d completion)", u.TotalTokens, u.PromptTokens, u.CompletionTokens))
		}
		row(w, "events", t.LastSeq)
		row(w, "created", when(&t.CreatedAt))
		row(w, "started", when(t.StartedAt))
		row(w, "finished", when(t.FinishedAt))
		for _, a := range waiting {
			row(w, "waiting", fmt.Sprintf("call %s: tool %s (%s)", a.CallID, a.Tool, a.Reason))
			row(w, "", fmt.Sprintf("skilld tasks approve %s %s   or   skilld tasks deny %s %s", t.ID, a.CallID, t.ID, a.CallID))
		}
	})
}

// pendingApprovals reads the task's log for the approval requests not yet
// decided.
func (c *apiCmd) pendingApprovals(ctx context.Context, id string) []agent.ApprovalRequested {
	cl, err := c.client(ctx, service.OpTasksEvents.Operation)
	var log *httpapi.TaskEventList
	if err == nil {
		log, err = cl.TaskEvents(ctx, service.TaskEventsParams{TaskRef: service.TaskRef{ID: id}})
	}
	if err != nil {
		return nil
	}
	var open []agent.ApprovalRequested
	for _, ev := range log.Items {
		switch p := ev.Payload.(type) {
		case agent.ApprovalRequested:
			open = append(open, p)
		case agent.ApprovalDecided:
			open = slices.DeleteFunc(open, func(o agent.ApprovalRequested) bool { return o.CallID == p.CallID })
		}
	}
	return open
}

// agentNames maps the workspace's agent IDs to names, for tables; a
// failure leaves the IDs shown.
func (c *apiCmd) agentNames(ctx context.Context) map[string]string {
	names := map[string]string{}
	if page, err := request(ctx, c, service.OpAgentsList, service.ListAgentsParams{PageSize: service.MaxPageSize}); err == nil {
		for _, a := range page.Items {
			names[a.ID] = a.Name
		}
	}
	return names
}

// describeStatus is a task's status, with its place in the queue.
func describeStatus(t *skilld.Task) string {
	if t.Status == skilld.TaskQueued && t.QueuePosition > 0 {
		return fmt.Sprintf("queued (position %d)", t.QueuePosition)
	}
	return string(t.Status)
}
