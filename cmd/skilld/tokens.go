package main

import (
	"context"
	"fmt"
	"io"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// tokensCommands is the "skilld tokens" group (workspace admins).
func tokensCommands() []command {
	return []command{
		{"create", "create a token; its secret is printed once", runTokensCreate},
		{"list", "list the workspace's tokens", runTokensList},
		{"revoke", "revoke a token", runTokensRevoke},
		{"self", "show the token in use: its name, role and workspace (any role)", runTokensSelf},
	}
}

func runTokensSelf(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tokens self", "")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	t, ok := call(ctx, c, service.OpTokensSelf, service.TokenSelfParams{})
	if !ok {
		return exitFailure
	}
	return c.output(t, func(w io.Writer) {
		row(w, "id", t.ID)
		row(w, "name", t.Name)
		role := string(t.Role)
		if t.InstanceAdmin {
			role += " (instance admin)"
		}
		row(w, "role", role)
		row(w, "workspace", t.WorkspaceName+" ("+t.WorkspaceID+")")
	})
}

func runTokensCreate(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tokens create", "NAME --role admin|member|viewer [--expires-in DURATION]")
	var p service.CreateTokenParams
	role := c.fs.String("role", "", "admin, member or viewer")
	c.fs.StringVar(&p.ExpiresIn, "expires-in", "", "lifetime such as 720h (default: no expiry)")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	if *role == "" {
		return usageErrorf(c.fs, "--role is required")
	}
	p.Name, p.Role = c.args[0], skilld.Role(*role)
	t, ok := call(ctx, c, service.OpTokensCreate, p)
	if !ok {
		return exitFailure
	}
	if c.json {
		return c.output(t, nil)
	}
	// The secret alone on stdout, so scripts can capture it.
	fmt.Fprintln(e.stdout, t.Secret)
	fmt.Fprintf(e.stderr, "created token %s (%s, role %s); save it: it will not be shown again\n", t.ID, t.Name, t.Role)
	return exitOK
}

func runTokensList(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tokens list", "")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	list, ok := call(ctx, c, service.OpTokensList, service.ListTokensParams{Page: service.Page{PageSize: service.MaxPageSize}})
	if !ok {
		return exitFailure
	}
	return c.output(list, func(w io.Writer) {
		row(w, "ID", "NAME", "ROLE", "CREATED", "EXPIRES", "REVOKED", "LAST USED")
		for _, t := range list.Items {
			role := string(t.Role)
			if t.InstanceAdmin {
				role += " (instance admin)"
			}
			row(w, t.ID, t.Name, role, when(&t.CreatedAt), when(t.ExpiresAt), when(t.RevokedAt), when(t.LastUsedAt))
		}
	})
}

func runTokensRevoke(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "tokens revoke", "ID")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	if _, ok := call(ctx, c, service.OpTokensRevoke, service.RevokeTokenParams{ID: c.args[0]}); !ok {
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "revoked %s\n", c.args[0])
	return exitOK
}
