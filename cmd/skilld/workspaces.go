package main

import (
	"cmp"
	"context"
	"flag"
	"io"

	"github.com/skilld/skilld/service"
)

// workspacesCommands is the "skilld workspaces" group.
func workspacesCommands() []command {
	return []command{
		{"list", "list workspaces (all of them for instance admins)", runWorkspacesList},
		{"create", "create a workspace (instance admins)", runWorkspacesCreate},
		{"update", "change a workspace's settings (instance admins)", runWorkspacesUpdate},
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
	c := newAPICmd(e, "workspaces update", "NAME --task-retention DURATION\n\n"+
		"Changes the settings of the workspace NAME (instance admins). --task-retention is how\n"+
		"long it keeps finished tasks before they are deleted with their logs and outputs: a\n"+
		"duration such as 720h, 0 to keep them forever, or \"\" for the server's --task-retention.")
	var p service.UpdateWorkspaceParams
	retention := c.fs.String("task-retention", "", "how long the workspace keeps finished tasks (720h; 0: forever; \"\": the server's)")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	c.fs.Visit(func(f *flag.Flag) {
		if f.Name == "task-retention" {
			p.TaskRetention = retention
		}
	})
	if p.TaskRetention == nil {
		return usageErrorf(c.fs, "nothing to change: give --task-retention")
	}
	c.workspace = c.args[0]
	ws, ok := call(ctx, c, service.OpWorkspacesUpdate, p)
	if !ok {
		return exitFailure
	}
	return c.output(ws, func(w io.Writer) {
		row(w, "NAME", "ID", "TASK RETENTION")
		row(w, ws.Name, ws.ID, cmp.Or(ws.TaskRetention, "the server's"))
	})
}
