package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/mcpserver"
	"github.com/skilld/skilld/service"
)

func runMCP(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "mcp", "--token TOKEN [--workspace WS] [--context-window N] [storage flags]\n\n"+
		"Serves the workspace's skills to one MCP client over stdin/stdout (Claude Desktop,\n"+
		"Cursor, VS Code, Codex): list_skills, activate_skill, read_skill_file, skill:// resources\n"+
		"and the skills/list and skills/get methods of the Skills extension. It opens the same\n"+
		"storage as skilld serve and acts for the token: its role and the workspace's install\n"+
		"policy apply. Logs go to stderr; stdout carries only the protocol. See docs/MCP.md.")
	var sf storageFlags
	sf.register(fs)
	var token string
	secretVar(fs, &token, "token", "SKILLD_TOKEN", "API `token` to act for")
	workspace := fs.String("workspace", os.Getenv("SKILLD_WORKSPACE"), "workspace name or ID (env SKILLD_WORKSPACE; default: the token's own)")
	window := fs.Int("context-window", mcpserver.DefaultWindow, "the client model's context window in tokens; one activation may take 10% of it")
	encoding := fs.String("tokenizer", tokenizer.O200kBase, "token encoding the budget counts with (o200k_base, cl100k_base)")
	manage := fs.Bool("management-tools", false, "also offer the skill management tools (skills_create, skills_edit_content, …);\n"+
		"the token's role decides which calls succeed")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	switch {
	case len(pos) > 0:
		return usageErrorf(fs, "unexpected argument %q", pos[0])
	case *window <= 0:
		return usageErrorf(fs, "--context-window must be positive, not %d", *window)
	}
	counter, err := tokenizer.NewCache().Get(*encoding)
	if err != nil {
		return usageErrorf(fs, "%s", errorText(err))
	}
	// The storage before the token: a client started in the wrong folder
	// is told about --data first, whatever else is missing.
	db, blobs, err := sf.openExisting(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld mcp: %s\n", errorText(err))
		return exitFailure
	}
	defer db.Close()
	defer blobs.Close()
	if token == "" {
		return usageErrorf(fs, "no token: pass --token or set SKILLD_TOKEN")
	}
	svc := service.New(db, blobs, &importer.GitHub{APIURL: importer.DefaultAPIURL, Token: os.Getenv("SKILLD_GITHUB_TOKEN")}, service.Config{})
	actor, err := svc.Authenticate(ctx, token)
	// Without a workspace the actor stays in its token's own.
	if err == nil && *workspace != "" {
		actor, err = svc.In(ctx, actor, *workspace)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld mcp: %s\n", errorText(err))
		return exitFailure
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, nil))
	srv, err := mcpserver.New(ctx, svc, actor, mcpserver.Options{Window: *window, Tokenizer: counter,
		ManagementTools: *manage, Version: versionString(), Logger: logger})
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld mcp: %s\n", errorText(err))
		return exitFailure
	}
	in := e.stdin
	if in == nil {
		in = eofReader{}
	}
	if err := srv.Run(ctx, io.NopCloser(in), nopWriteCloser{e.stdout}); err != nil {
		fmt.Fprintf(e.stderr, "skilld mcp: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// nopWriteCloser keeps the transport from closing the process's stdout,
// which is not its to close.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// eofReader is stdin for in-process tests that give none.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
