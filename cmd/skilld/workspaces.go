package main

import (
	"cmp"
	"context"
	"io"
	"strconv"

	"github.com/skilld/skilld/service"
)

// workspacesCommands is the "skilld workspaces" group.
func workspacesCommands() []command {
	return []command{
		{"list", "list workspaces (all of them for instance admins)", runWorkspacesList},
		{"create", "create a workspace (instance admins)", runWorkspacesCreate},
		{"update", "change a workspace's settings: task retention, task caps (instance admins)", runWorkspacesUpdate},
	}
}

func runWorkspacesList(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "workspaces list", "[--page N]")
	var p service.ListWorkspacesParams
	c.fs.IntVar(&p.Page.Page, "page", 1, "page number")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	p.PageSize = service.MaxPageSize
	list, ok := call(ctx, c, service.OpWorkspacesList, p)
	if !ok {
		return exitFailure
	}
	return c.output(list, func(w io.Writer) {
		row(w, "NAME", "ID", "CREATED")
		for _, ws := range list.Items {
			row(w, ws.Name, ws.ID, when(&ws.CreatedAt))
		}
	})
}

func runWorkspacesCreate(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "workspaces create", "NAME")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	ws, ok := call(ctx, c, service.OpWorkspacesCreate, service.CreateWorkspaceParams{Name: c.args[0]})
	if !ok {
		return exitFailure
	}
	return c.output(ws, func(w io.Writer) {
		row(w, "NAME", "ID", "CREATED")
		row(w, ws.Name, ws.ID, when(&ws.CreatedAt))
	})
}

func runWorkspacesUpdate(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "workspaces update", "NAME [--task-retention DURATION] [--max-running-tasks N] [--max-queued-tasks N]\n\n"+
		"Changes the settings of the workspace NAME (instance admins); a setting not given stays.\n"+
		"--task-retention is how long it keeps finished tasks before they are deleted with their\n"+
		"logs and outputs: a duration such as 720h, 0 to keep them forever, or \"\" for the server's\n"+
		"--task-retention. The task caps replace the server's --workspace-max-running and\n"+
		"--workspace-max-queued for it (0: no cap; -1: the server's again).")
	var running, queued int
	retention := c.fs.String("task-retention", "", "how long the workspace keeps finished tasks (720h; 0: forever; \"\": the server's)")
	c.fs.IntVar(&running, "max-running-tasks", 0, "the most of its tasks that run at once (0: no cap; -1: the server's --workspace-max-running)")
	c.fs.IntVar(&queued, "max-queued-tasks", 0, "the most of its tasks that wait to start (0: no cap; -1: the server's --workspace-max-queued)")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	var p service.UpdateWorkspaceParams
	set := given(c.fs)
	if set("task-retention") {
		p.TaskRetention = retention
	}
	if set("max-running-tasks") {
		p.MaxRunningTasks = &running
	}
	if set("max-queued-tasks") {
		p.MaxQueuedTasks = &queued
	}
	if p.TaskRetention == nil && p.MaxRunningTasks == nil && p.MaxQueuedTasks == nil {
		return usageErrorf(c.fs, "nothing to change: give --task-retention, --max-running-tasks or --max-queued-tasks")
	}
	c.workspace = c.args[0]
	ws, ok := call(ctx, c, service.OpWorkspacesUpdate, p)
	if !ok {
		return exitFailure
	}
	return c.output(ws, func(w io.Writer) {
		row(w, "NAME", "ID", "TASK RETENTION", "MAX RUNNING", "MAX QUEUED")
		row(w, ws.Name, ws.ID, cmp.Or(ws.TaskRetention, "the server's"), ownCap(ws.MaxRunningTasks), ownCap(ws.MaxQueuedTasks))
	})
}

// ownCap shows a workspace's own cap: "server" when the server's applies.
func ownCap(n *int) string {
	switch {
	case n == nil:
		return "server"
	case *n == 0:
		return "none"
	}
	return strconv.Itoa(*n)
}
