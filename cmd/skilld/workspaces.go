package main

import (
	"context"
	"io"

	"github.com/skilld/skilld/service"
)

// workspacesCommands is the "skilld workspaces" group.
func workspacesCommands() []command {
	return []command{
		{"list", "list workspaces (all of them for instance admins)", runWorkspacesList},
		{"create", "create a workspace (instance admins)", runWorkspacesCreate},
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
