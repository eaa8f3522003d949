package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/skilld/skilld/internal/units"
	"github.com/skilld/skilld/metrics"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/service"
)

// workspacesCommands is the "skilld workspaces" group.
func workspacesCommands() []command {
	return []command{
		{"list", "list workspaces (all of them for instance admins)", runWorkspacesList},
		{"create", "create a workspace (instance admins)", runWorkspacesCreate},
		{"update", "change a workspace's settings: task retention, task caps, storage quota (instance admins)", runWorkspacesUpdate},
		{"usage", "what a workspace keeps and runs: tasks by status, bytes stored against its quota", runWorkspacesUsage},
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
	c := newAPICmd(e, "workspaces update", "NAME [--task-retention DURATION] [--max-running-tasks N] [--max-queued-tasks N] [--storage-quota SIZE] [--lenient-lengths=true|false]\n\n"+
		"Changes the settings of the workspace NAME (instance admins); a setting not given stays.\n"+
		"--task-retention is how long it keeps finished tasks before they are deleted with their\n"+
		"logs and outputs: a duration such as 720h, 0 to keep them forever, or \"\" for the server's\n"+
		"--task-retention. The task caps replace the server's --workspace-max-running and\n"+
		"--workspace-max-queued for it (0: no cap; -1: the server's again). --storage-quota bounds\n"+
		"the bytes its tasks keep (10GiB; 0: no quota; server: the server's --workspace-storage-quota).\n"+
		"--lenient-lengths stores skills whose description or compatibility is over the\n"+
		"specification's length limit, with a warning, instead of refusing them.")
	var running, queued int
	lenient := c.fs.Bool("lenient-lengths", false, "store skills with over-long descriptions with a warning instead of refusing them")
	quota := c.fs.String("storage-quota", "", "the most bytes its tasks may keep, such as 10GiB (0: no quota; server: the server's --workspace-storage-quota)")
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
	if set("storage-quota") {
		n := int64(-1)
		if *quota != "server" {
			var err error
			if n, err = sandbox.ParseSize(*quota); err != nil {
				return usageErrorf(c.fs, "--storage-quota must be a size such as 10GiB, 0 for no quota, or server for the server's, not %q", *quota)
			}
		}
		p.StorageQuota = &n
	}
	if set("lenient-lengths") {
		p.LenientLengths = lenient
	}
	if p.TaskRetention == nil && p.MaxRunningTasks == nil && p.MaxQueuedTasks == nil && p.StorageQuota == nil && p.LenientLengths == nil {
		return usageErrorf(c.fs, "nothing to change: give --task-retention, --max-running-tasks, --max-queued-tasks, --storage-quota or --lenient-lengths")
	}
	c.workspace = c.args[0]
	ws, ok := call(ctx, c, service.OpWorkspacesUpdate, p)
	if !ok {
		return exitFailure
	}
	return c.output(ws, func(w io.Writer) {
		row(w, "NAME", "ID", "TASK RETENTION", "MAX RUNNING", "MAX QUEUED", "STORAGE QUOTA")
		quota := "server"
		if q := ws.StorageQuota; q != nil && *q == 0 {
			quota = "none"
		} else if q != nil {
			quota = units.Bytes(*q)
		}
		row(w, ws.Name, ws.ID, cmp.Or(ws.TaskRetention, "the server's"), ownCap(ws.MaxRunningTasks), ownCap(ws.MaxQueuedTasks), quota)
	})
}

func runWorkspacesUsage(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "workspaces usage", "[NAME]\n\n"+
		"Shows what the workspace NAME (default: the token's) keeps and runs: its tasks by status,\n"+
		"the bytes their logs and large outputs keep against its storage quota, and its skills.")
	if code, ok := c.parse(args, 0, 1); !ok {
		return code
	}
	if len(c.args) == 1 {
		c.workspace = c.args[0]
	}
	u, ok := call(ctx, c, service.OpWorkspacesUsage, service.WorkspaceUsageParams{})
	if !ok {
		return exitFailure
	}
	return c.output(u, func(w io.Writer) {
		quota := "none"
		if u.StorageQuota > 0 {
			quota = fmt.Sprintf("%s (%d%% used; the %s's)", units.Bytes(u.StorageQuota), u.StoredBytes*100/u.StorageQuota, u.QuotaSource)
		}
		row(w, "WORKSPACE", u.Workspace)
		row(w, "SKILLS", strconv.Itoa(u.Skills))
		var tasks []string
		for _, st := range metrics.TaskStatuses {
			if n := u.Tasks[st]; n > 0 {
				tasks = append(tasks, fmt.Sprintf("%d %s", n, st))
			}
		}
		row(w, "TASKS", fmt.Sprintf("%d (%s)", u.TasksTotal, cmp.Or(strings.Join(tasks, ", "), "none")))
		row(w, "STORED", fmt.Sprintf("%s (logs %s, outputs %s)", units.Bytes(u.StoredBytes), units.Bytes(u.Stored.LogBytes), units.Bytes(u.Stored.OutputBytes)))
		row(w, "QUOTA", quota)
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
