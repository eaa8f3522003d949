package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// seedWorkspace is a real service (SQLite, files) whose workspace holds n
// skills of three files each (skill-00000 …), with a viewer token's secret.
func seedWorkspace(tb testing.TB, n int) (*service.Service, string) {
	tb.Helper()
	ctx := tb.Context()
	svc, db, admin, _ := newService(tb)
	// One package through the service, then the skills through the store
	// in large transactions: the seeding would otherwise take minutes.
	sk, err := svc.CreateSkill(ctx, admin, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md":            "---\nname: skill-00000\ndescription: Does a task.\n---\n# Task\n\nRun scripts/run.sh, then read references/notes.md.\n",
		"scripts/run.sh":      "#!/bin/sh\necho done\n",
		"references/notes.md": "Notes.\n",
	}})
	if err != nil {
		tb.Fatal(err)
	}
	storetest.SeedSkills(tb, db, admin.WorkspaceID, sk.Digest, "Does a task.", 1, n)
	tok, err := svc.CreateToken(ctx, admin, service.CreateTokenParams{Name: "viewer", Role: skilld.RoleViewer})
	if err != nil {
		tb.Fatal(err)
	}
	return svc, tok.Secret
}

// benchClient connects go-sdk clients to a streamable HTTP endpoint, as a
// client opening a session does: initialize, then initialized.
func benchClient(b *testing.B, url, secret string) func() *mcp.ClientSession {
	b.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	hc := &http.Client{Transport: bearerTransport(secret)}
	return func() *mcp.ClientSession {
		cs, err := c.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return cs
	}
}

// floorServer is the floor: a go-sdk server with one tool returning text,
// served over streamable HTTP the way the SDK's own examples do.
func floorServer(b *testing.B, text string) string {
	b.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: toolActivateSkill}, func(context.Context, *mcp.CallToolRequest, activateSkillParams) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.Cleanup(ts.Close)
	return ts.URL
}

func skilldServer(b *testing.B, svc *service.Service) string {
	b.Helper()
	ts := httptest.NewServer(HTTPHandler(svc, HTTPOptions{}))
	b.Cleanup(ts.Close)
	return ts.URL
}

func benchOpen(b *testing.B, connect func() *mcp.ClientSession) {
	// The first session warms what every later one shares.
	connect().Close()
	defer cpuPerOp(b)()
	for b.Loop() {
		connect().Close()
	}
}

// cpuPerOp reports the process's CPU time (client and server, both in
// this process) per operation as cpu-ns/op when the returned function is
// called after the loop. On a machine shared with other work it moves
// far less than the wall time, so floor and skilld compare better by it.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSessionOpen opens and closes MCP sessions over streamable HTTP:
// skilld with 2 and 10,000 skills in the workspace, and the floor.
func BenchmarkSessionOpen(b *testing.B) {
	b.Run("floor", func(b *testing.B) {
		benchOpen(b, benchClient(b, floorServer(b, "done"), ""))
	})
	for _, n := range []int{2, 10_000} {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			svc, secret := seedWorkspace(b, n)
			benchOpen(b, benchClient(b, skilldServer(b, svc), secret))
		})
	}
}

// BenchmarkActivateSkill calls activate_skill on an open session in a
// workspace of 10,000 skills, next to the floor: a go-sdk tool returning
// the same bytes.
func BenchmarkActivateSkill(b *testing.B) {
	svc, secret := seedWorkspace(b, 10_000)
	cs := benchClient(b, skilldServer(b, svc), secret)()
	defer cs.Close()
	args := map[string]any{"skill_name": "skill-04242"}
	res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: toolActivateSkill, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("activate_skill: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	floor := benchClient(b, floorServer(b, text), "")()
	defer floor.Close()
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
	}{{"floor", floor}, {"skilld", cs}} {
		b.Run(c.name, func(b *testing.B) {
			defer cpuPerOp(b)()
			for b.Loop() {
				res, err := c.cs.CallTool(b.Context(), &mcp.CallToolParams{Name: toolActivateSkill, Arguments: args})
				if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != text {
					b.Fatalf("activate_skill: %v %+v", err, res)
				}
			}
		})
	}
}
