package main

import (
	"cmp"
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
	c := newAPICmd(e, "tokens create", "NAME --role admin|member|viewer [--expires-in DURATION]\n"+
		"       skilld tokens create --admin [NAME] [--workspace WS] [storage flags]\n\n"+
		"Creates a token in the workspace through the server and prints its secret once.\n\n"+
		"With --admin it works on the server's storage instead, for an operator with access to\n"+
		"its files (or its database) who lost the admin token: it creates an instance-admin\n"+
		"token (NAME default "+adminTokenName+") in workspace \"default\" or --workspace. Give the\n"+
		"storage flags serve runs with (--data, or --db); the server may be running meanwhile\n"+
		"(SQLite in WAL mode takes the write) and accepts the token at once. A data dir or\n"+
		"database that is not there is refused, and nothing is created.")
	var p service.CreateTokenParams
	role := c.fs.String("role", "", "admin, member or viewer")
	c.fs.StringVar(&p.ExpiresIn, "expires-in", "", "lifetime such as 720h (default: no expiry)")
	admin := c.fs.Bool("admin", false, "create an instance-admin token directly in the server's storage (no --server or --token)")
	var sf storageFlags
	sf.registerStores(c.fs)
	pos, code, ok := parseArgs(c.fs, args)
	if !ok {
		return code
	}
	p.Role = skilld.Role(*role)
	if *admin {
		return createAdminToken(ctx, c, &sf, pos, p)
	}
	if code, ok := c.accept(pos, 1, 1); !ok {
		return code
	}
	if *role == "" {
		return usageErrorf(c.fs, "--role is required")
	}
	p.Name = c.args[0]
	t, ok := call(ctx, c, service.OpTokensCreate, p)
	if !ok {
		return exitFailure
	}
	if c.json {
		return c.output(t, nil)
	}
	printSecret(e, t)
	return exitOK
}

// adminTokenName is the name of a token tokens create --admin makes when
// given none.
const adminTokenName = "recovered-admin"

// createAdminToken is tokens create --admin: the storage is opened
// directly, and whoever can do that acts as its administrator.
func createAdminToken(ctx context.Context, c *apiCmd, sf *storageFlags, pos []string, p service.CreateTokenParams) int {
	e := c.e
	switch {
	case len(pos) > 1:
		return usageErrorf(c.fs, "unexpected argument %q", pos[1])
	case p.Role != "" && p.Role != skilld.RoleAdmin:
		return usageErrorf(c.fs, "--admin makes an instance-admin token, whose role is admin; leave out --role %s", p.Role)
	}
	p.Name = adminTokenName
	if len(pos) == 1 {
		p.Name = pos[0]
	}
	db, blobs, err := sf.openExisting(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld tokens create: %s\n", errorText(err))
		return exitFailure
	}
	defer db.Close()
	defer blobs.Close()
	svc := service.New(db, blobs, nil, service.Config{})
	actor, err := svc.In(ctx, service.Actor{InstanceAdmin: true, Role: skilld.RoleAdmin, Name: "skilld tokens create --admin"},
		cmp.Or(c.workspace, service.BootstrapWorkspace))
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld tokens create: %s\n", errorText(err))
		return exitFailure
	}
	t, err := svc.CreateInstanceAdminToken(ctx, actor, p)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld tokens create: %s\n", errorText(err))
		return exitFailure
	}
	if c.json {
		return c.output(t, nil)
	}
	printSecret(e, t)
	return exitOK
}

// printSecret prints a new token's secret alone on stdout, so scripts can
// capture it, and what it is on stderr.
func printSecret(e *env, t *service.NewToken) {
	fmt.Fprintln(e.stdout, t.Secret)
	role := string(t.Role)
	if t.InstanceAdmin {
		role += ", instance admin"
	}
	fmt.Fprintf(e.stderr, "created token %s (%s, role %s); save it: it will not be shown again\n", t.ID, t.Name, role)
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
