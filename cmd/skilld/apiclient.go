package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
)

// This file holds what every API client command shares: the connection
// flags, subcommand dispatch, error reporting and output.

// runGroup dispatches "skilld GROUP VERB …" to the verb, a command of its
// own.
func runGroup(group string, subs []command) func(context.Context, *env, []string) int {
	return func(ctx context.Context, e *env, args []string) int {
		if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			w := e.stderr
			if len(args) > 0 {
				w = e.stdout
			}
			fmt.Fprintf(w, "Usage: skilld %s <command> [flags] [arguments]\n\nCommands:\n", group)
			for _, s := range subs {
				fmt.Fprintf(w, "  %-16s %s\n", s.name, s.summary)
			}
			fmt.Fprintf(w, "\nRun 'skilld %s <command> -h' for a command's flags.\n", group)
			if len(args) == 0 {
				return exitUsage
			}
			return exitOK
		}
		for _, s := range subs {
			if s.name == args[0] {
				return s.run(ctx, e, args[1:])
			}
		}
		fmt.Fprintf(e.stderr, "skilld %s: unknown command %q; run 'skilld %s help'\n", group, args[0], group)
		return exitUsage
	}
}

// apiCmd is one client command: its flags (its own and the connection
// flags every client command has) and, once parsed, its arguments.
type apiCmd struct {
	e         *env
	fs        *flag.FlagSet
	server    string
	token     string
	workspace string
	json      bool
	args      []string
}

func newAPICmd(e *env, name, synopsis string) *apiCmd {
	c := &apiCmd{e: e, fs: newFlags(e, name, synopsis)}
	c.fs.StringVar(&c.server, "server", cmp.Or(os.Getenv("SKILLD_SERVER"), "http://127.0.0.1:8080"), "server URL (env SKILLD_SERVER)")
	secretVar(c.fs, &c.token, "token", "SKILLD_TOKEN", "API `token`")
	c.fs.StringVar(&c.workspace, "workspace", os.Getenv("SKILLD_WORKSPACE"), "workspace name or ID (env SKILLD_WORKSPACE; default: the token's own)")
	c.fs.BoolVar(&c.json, "json", false, "print the server's JSON answer instead of a table")
	return c
}

// parse parses the flags and checks that between min and max arguments
// were given (max < 0: no upper bound). When ok is false, code is the exit
// code to return.
func (c *apiCmd) parse(args []string, min, max int) (code int, ok bool) {
	pos, code, ok := parseArgs(c.fs, args)
	if !ok {
		return code, false
	}
	return c.accept(pos, min, max)
}

// accept checks the arguments parse left, for a command that parsed its
// flags itself.
func (c *apiCmd) accept(pos []string, min, max int) (code int, ok bool) {
	switch {
	case len(pos) < min:
		return usageErrorf(c.fs, "missing arguments"), false
	case max >= 0 && len(pos) > max:
		return usageErrorf(c.fs, "unexpected argument %q", pos[max]), false
	case c.token == "":
		return usageErrorf(c.fs, "no token: pass --token or set SKILLD_TOKEN"), false
	}
	c.args = pos
	return exitOK, true
}

// client returns the client for operation op. Without --workspace or
// SKILLD_WORKSPACE, a workspace route acts in the token's own workspace,
// which the server names (tokens.self) on the first such call; it is
// remembered for the rest of this command only.
func (c *apiCmd) client(ctx context.Context, op service.Operation) (*httpapi.Client, error) {
	cl := &httpapi.Client{BaseURL: c.server, Token: c.token, Workspace: c.workspace}
	if rt, ok := httpapi.RouteFor(op); c.workspace != "" || !ok || !rt.Workspace() {
		return cl, nil
	}
	self, err := httpapi.Call(ctx, cl, service.OpTokensSelf, service.TokenSelfParams{})
	switch {
	case skilld.ErrorCode(err) == skilld.ENOTFOUND:
		// A server from before GET /v1/token (a token's own workspace
		// always exists): act as clients always did, in the bootstrap
		// workspace.
		c.workspace = service.BootstrapWorkspace
	case err != nil:
		return nil, err
	default:
		c.workspace = self.WorkspaceID
	}
	cl.Workspace = c.workspace
	return cl, nil
}

// request runs an operation for command c. (Go methods cannot have type
// parameters, so this and call are functions.)
func request[P, R any](ctx context.Context, c *apiCmd, op service.Op[P, R], params P) (R, error) {
	cl, err := c.client(ctx, op.Operation)
	if err != nil {
		var zero R
		return zero, err
	}
	return httpapi.Call(ctx, cl, op, params)
}

// call runs an operation; on failure it prints the error and ok is false.
func call[P, R any](ctx context.Context, c *apiCmd, op service.Op[P, R], params P) (res R, ok bool) {
	res, err := request(ctx, c, op, params)
	if err != nil {
		c.fail(err)
		return res, false
	}
	return res, true
}

// fail prints an API error as "skilld: <code>: <message>" with its details
// and returns the failure exit code.
func (c *apiCmd) fail(err error) int {
	printError(c.e.stderr, err)
	if unreachable(err) {
		fmt.Fprintf(c.e.stderr, "  is skilld serve running at %s? Point the client at another server with --server URL or SKILLD_SERVER.\n", c.server)
	}
	return exitFailure
}

// unreachable says err is a connection to the server that could not be
// opened (refused, no route, no such host), as opposed to an answer.
func unreachable(err error) bool {
	var op *net.OpError
	return skilld.ErrorCode(err) == skilld.EUNAVAILABLE && errors.As(err, &op) && op.Op == "dial"
}

func printError(w io.Writer, err error) {
	var se *skilld.Error
	if !errors.As(err, &se) {
		fmt.Fprintf(w, "skilld: %v\n", err) // a local failure (a file, the network)
		return
	}
	msg := skilld.ErrorMessage(err)
	fmt.Fprintf(w, "skilld: %s: %s\n", se.Code, msg)
	for _, d := range skilld.ErrorDetails(err) {
		if d.Message != msg {
			fmt.Fprintf(w, "  %s: %s\n", d.Field, d.Message)
		}
	}
}

// output prints v as indented JSON with --json, else calls table with a
// tab writer that is flushed afterwards.
func (c *apiCmd) output(v any, table func(w io.Writer)) int {
	if c.json {
		enc := json.NewEncoder(c.e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return c.fail(err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(c.e.stdout, 0, 4, 2, ' ', 0)
	table(tw)
	tw.Flush()
	return exitOK
}

// row writes one tab-separated table row.
func row(w io.Writer, cols ...any) {
	s := make([]string, len(cols))
	for i, c := range cols {
		s[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(fmt.Sprint(c))
	}
	fmt.Fprintln(w, strings.Join(s, "\t"))
}

// short cuts text to n characters for a table column.
func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// shortDigest shows the first 12 hex digits of a sha256: digest.
func shortDigest(d string) string {
	return short(strings.TrimPrefix(d, "sha256:"), 13)
}

func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// atoi parses a positional number argument, as a usage error when bad.
func (c *apiCmd) atoi(s, what string) (int, bool) {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != s || n < 1 {
		usageErrorf(c.fs, "%s must be a positive number, not %q", what, s)
		return 0, false
	}
	return n, true
}
