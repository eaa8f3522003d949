package main

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/importer/githubtest"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// apiServer is a real skilld server for the client commands: the service
// on a real store and blob directory behind an httptest server, with a
// fake GitHub serving one repository (o/r: skills/x-skill and skills/y-skill).
type apiServer struct {
	url   string
	admin string
}

func newAPIServer(t *testing.T, open storetest.Opener) *apiServer {
	t.Helper()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gh := githubtest.New(t)
	gh.AddRepo("o", "r", "main", githubtest.FilesOf(map[string]string{
		"skills/x-skill/SKILL.md":     skillText("x-skill", "Imported from GitHub."),
		"skills/x-skill/scripts/a.sh": "#!/bin/sh\necho a\n",
		"skills/y-skill/SKILL.md":     skillText("y-skill", "Also on GitHub."),
	})...)
	svc := service.New(open(t), blobs, &importer.GitHub{APIURL: gh.API.URL}, service.Config{})
	admin, err := svc.Bootstrap(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&httpapi.Server{Service: svc, Version: "test", Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(srv.Close)
	return &apiServer{url: srv.URL, admin: admin}
}

// cli runs a client command against the server with token and workspace.
func (s *apiServer) cli(t *testing.T, token, ws string, args ...string) (int, string, string) {
	t.Helper()
	full := append(append([]string{}, args...), "--server", s.url, "--token", token, "--workspace", ws)
	return runCLI(t, full...)
}

// ok runs a command that must succeed and returns its stdout.
func (s *apiServer) ok(t *testing.T, token, ws string, args ...string) string {
	t.Helper()
	code, out, errOut := s.cli(t, token, ws, args...)
	if code != exitOK {
		t.Fatalf("skilld %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// okJSON runs a command with --json and decodes its output.
func (s *apiServer) okJSON(t *testing.T, token, ws string, args ...string) map[string]any {
	t.Helper()
	out := s.ok(t, token, ws, append(args, "--json")...)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("skilld %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
	return m
}

func skillText(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\n\nDo the thing.\n"
}
