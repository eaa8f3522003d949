package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/skilld/skilld/permissions"
	"github.com/skilld/skilld/service"
)

func runSkillsPermissions(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills permissions", "ID\n\n"+
		"Shows what the skill's current package asks for in its skilld.yaml (network hosts,\n"+
		"secrets) and whether an admin approved it: none, approval_needed or approved.")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	p, ok := call(ctx, c, service.OpSkillsPermissions, service.GetSkillParams{SkillRef: service.SkillRef{ID: c.args[0]}})
	if !ok {
		return exitFailure
	}
	return c.printPermissions(p)
}

func runSkillsApprove(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills approve", "ID [--digest D]\n\n"+
		"Approves what one package of the skill asks for (admins): its current package, or\n"+
		"with --digest another of its versions or the catalog version a held update moves to.")
	var p service.ApprovePermissionsParams
	c.fs.StringVar(&p.Digest, "digest", "", "package digest (sha256:…) to approve (default: the current one)")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	p.ID = c.args[0]
	res, ok := call(ctx, c, service.OpSkillsPermissionsApprove, p)
	if !ok {
		return exitFailure
	}
	return c.printPermissions(res)
}

func (c *apiCmd) printPermissions(p *service.SkillPermissions) int {
	return c.output(p, func(w io.Writer) {
		row(w, "package", shortDigest(p.Digest))
		row(w, "state", p.State)
		printRequest(w, "requested", p.Requested)
		if p.Approved != nil {
			printRequest(w, "approved", *p.Approved)
		}
	})
}

func printRequest(w io.Writer, what string, r permissions.Request) {
	list := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, " ")
	}
	row(w, what+" network", list(r.Network))
	row(w, what+" secrets", list(r.Secrets))
	if len(r.Tools) > 0 {
		row(w, what+" tools", list(r.Tools))
	}
}

// secretsCommands is the "skilld secrets" group.
func secretsCommands() []command {
	return []command{
		{"set", "store a secret, its value read from standard input (admins)", runSecretsSet},
		{"list", "list the workspace's secrets (names and update times, never values)", runSecretsList},
		{"delete", "delete a secret (admins)", runSecretsDelete},
		{"reseal", "encrypt again under the server's current key the secrets sealed under an old one (admins)", runSecretsReseal},
	}
}

func runSecretsSet(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "secrets set", "NAME < FILE\n\n"+
		"Stores the secret NAME (an environment variable name) with the value read from\n"+
		"standard input; one trailing newline is dropped. The server encrypts it at rest.")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	if e.stdin == nil {
		return c.fail(fmt.Errorf("secrets set reads the value from standard input"))
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, service.MaxSecretSize+2))
	if err != nil {
		return c.fail(err)
	}
	value := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if _, ok := call(ctx, c, service.OpSecretsPut, service.PutSecretParams{SecretRef: service.SecretRef{Name: c.args[0]}, Value: value}); !ok {
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "stored secret %s\n", c.args[0])
	return exitOK
}

func runSecretsList(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "secrets list", "")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	l, ok := call(ctx, c, service.OpSecretsList, service.ListSecretsParams{})
	if !ok {
		return exitFailure
	}
	return c.output(l, func(w io.Writer) {
		row(w, "NAME", "UPDATED", "BY")
		for _, s := range l.Items {
			row(w, s.Name, when(&s.UpdatedAt), s.UpdatedBy)
		}
	})
}

func runSecretsDelete(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "secrets delete", "NAME")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	if _, ok := call(ctx, c, service.OpSecretsDelete, service.SecretRef{Name: c.args[0]}); !ok {
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "deleted secret %s\n", c.args[0])
	return exitOK
}

func runSecretsReseal(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "secrets reseal", "\n\n"+
		"After a key rotation (the server started with the new --secrets-key-file and the old\n"+
		"key as --secrets-old-key-file), encrypts the workspace's secrets again under the new key.")
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	r, ok := call(ctx, c, service.OpSecretsReseal, service.ResealSecretsParams{})
	if !ok {
		return exitFailure
	}
	return c.output(r, func(w io.Writer) { fmt.Fprintf(w, "resealed %d secrets\n", r.Resealed) })
}
