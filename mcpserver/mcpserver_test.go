package mcpserver

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/internal/streamlimit"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// fixture is a real service (SQLite, files) holding a default workspace
// with two skills of its own and one installed from a registry that the
// policy withholds, plus a token of each role.
type fixture struct {
	svc                   *service.Service
	admin, member, viewer service.Actor
	secrets               map[skilld.Role]string
}

const lintMD = "---\nname: lint\ndescription: Lints Go code the team's way.\nlicense: MIT\n---\n# Lint\n\nRun scripts/lint.sh, then read references/rules.md.\n"

// newService is a real service on SQLite and files, bootstrapped: its
// store, the instance admin and the admin's secret.
func newService(tb testing.TB) (*service.Service, store.Store, service.Actor, string) {
	tb.Helper()
	blobs, err := fsblob.New(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	db := storetest.OpenSQLite(tb)
	svc := service.New(db, blobs, nil, service.Config{})
	secret, err := svc.Bootstrap(tb.Context(), "")
	if err != nil {
		tb.Fatal(err)
	}
	admin, err := svc.Authenticate(tb.Context(), secret)
	if err != nil {
		tb.Fatal(err)
	}
	return svc, db, admin, secret
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	svc, _, admin, secret := newService(t)
	f := &fixture{svc: svc, admin: admin, secrets: map[skilld.Role]string{skilld.RoleAdmin: secret}}
	for _, files := range []map[string]string{
		{"SKILL.md": lintMD, "scripts/lint.sh": "#!/bin/sh\ngo vet ./...\n", "references/rules.md": "Rule 1: errors are wrapped.\n"},
		{"SKILL.md": "---\nname: commit-message\ndescription: Writes commit messages.\n---\nUse the imperative mood.\n"},
	} {
		if _, err := svc.CreateSkill(ctx, admin, service.CreateSkillParams{Files: files}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateRegistry(ctx, admin, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishCatalogItem(ctx, admin, service.PublishCatalogItemParams{Registry: "acme",
		Archive: zipOf(t, map[string]string{"risky/SKILL.md": "---\nname: risky\ndescription: From outside.\n---\nDo risky things.\n"})}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.InstallSkill(ctx, admin, service.InstallSkillParams{Item: "acme/risky"}); err != nil {
		t.Fatal(err)
	}
	// Written after the install: the skill stays stored but is withheld.
	if _, err := svc.PutPolicy(ctx, admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, Registry: "acme"}}}); err != nil {
		t.Fatal(err)
	}
	for _, role := range []skilld.Role{skilld.RoleMember, skilld.RoleViewer} {
		tok, err := svc.CreateToken(ctx, admin, service.CreateTokenParams{Name: string(role), Role: role})
		if err != nil {
			t.Fatal(err)
		}
		f.secrets[role] = tok.Secret
		a, err := svc.Authenticate(ctx, tok.Secret)
		if err != nil {
			t.Fatal(err)
		}
		if role == skilld.RoleMember {
			f.member = a
		} else {
			f.viewer = a
		}
	}
	return f
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// connect runs a server for actor and returns a go-sdk client session on
// it over the in-memory transport.
func connect(t *testing.T, f *fixture, actor service.Actor, opts Options) *mcp.ClientSession {
	t.Helper()
	return clientOn(t, serve(t, f.svc, actor, opts))
}

// serve runs a server for actor on the in-memory transport and returns
// the client's end.
func serve(t *testing.T, svc *service.Service, actor service.Actor, opts Options) mcp.Transport {
	t.Helper()
	srv, err := New(t.Context(), svc, actor, opts)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.mcp.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return ct
}

func clientOn(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	return clientWith(t, tr, nil)
}

func clientWith(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "skilld-test", Version: "1"}, opts)
	if err := mcp.AddSendingCustomMethod[*skillsListParams, *skillsListResult](c, methodSkillsList); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*skillsGetParams, *skillsGetResult](c, methodSkillsGet); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*directoryReadParams, *directoryReadResult](c, methodDirectoryRead); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// exercise is what every transport must serve: progressive disclosure
// with the withheld skill invisible everywhere.
func exercise(t *testing.T, cs *mcp.ClientSession) {
	ctx := t.Context()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var enum []any
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Name == toolActivateSkill {
			var schema struct {
				Properties map[string]struct{ Enum []any } `json:"properties"`
			}
			b, _ := json.Marshal(tl.InputSchema)
			json.Unmarshal(b, &schema)
			enum = schema.Properties["skill_name"].Enum
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{toolActivateSkill, toolListSkills, toolReadSkillFile}) {
		t.Errorf("tools %v", names)
	}
	if !slices.Equal(enum, []any{"commit-message", "lint"}) {
		t.Errorf("activate_skill enum %v: want the disclosed skills only", enum)
	}

	out, isErr := call(t, cs, toolListSkills, nil)
	var list SkillList
	if isErr || json.Unmarshal([]byte(out), &list) != nil || len(list.Skills) != 2 || list.Skills[1].Name != "lint" ||
		list.Skills[1].Description != "Lints Go code the team's way." || list.Skills[1].URI != "skill://lint/SKILL.md" {
		t.Errorf("list_skills: %s", out)
	}
	if strings.Contains(out, "risky") {
		t.Errorf("list_skills shows the withheld skill: %s", out)
	}

	out, isErr = call(t, cs, toolActivateSkill, map[string]any{"skill_name": "lint"})
	if isErr || !strings.HasPrefix(out, `<skill_content name="lint">`) || !strings.Contains(out, "Run scripts/lint.sh") ||
		!strings.Contains(out, "- references/rules.md\n") || !strings.HasSuffix(out, "</skill_content>") {
		t.Errorf("activate_skill lint:\n%s", out)
	}
	for _, name := range []string{"risky", "nope"} {
		out, isErr = call(t, cs, toolActivateSkill, map[string]any{"skill_name": name})
		if !isErr || !strings.Contains(out, "(not_found)") || !strings.Contains(out, `no skill named "`+name+`"`) {
			t.Errorf("activate_skill %s: want the same not_found for withheld and missing, got %v %s", name, isErr, out)
		}
	}

	out, isErr = call(t, cs, toolReadSkillFile, map[string]any{"skill_name": "lint", "path": "references/rules.md"})
	if isErr || out != "Rule 1: errors are wrapped.\n" {
		t.Errorf("read_skill_file: %v %q", isErr, out)
	}
	out, isErr = call(t, cs, toolReadSkillFile, map[string]any{"skill_name": "lint", "path": "missing.md"})
	if !isErr || !strings.Contains(out, `skill "lint" has no file "missing.md"`) {
		t.Errorf("read_skill_file of a missing file: %s", out)
	}
	out, isErr = call(t, cs, toolReadSkillFile, map[string]any{"skill_name": "risky", "path": "SKILL.md"})
	if !isErr || !strings.Contains(out, "not_found") {
		t.Errorf("read_skill_file of a withheld skill: %s", out)
	}

	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range resources.Resources {
		uris = append(uris, r.URI)
		if d, _ := r.Meta[metaDigest].(string); r.URI != indexURI && (!strings.HasPrefix(d, "sha256:") || len(d) != 71) {
			t.Errorf("resource %s has digest %q", r.URI, d)
		}
	}
	slices.Sort(uris)
	if !slices.Equal(uris, []string{"skill://commit-message/SKILL.md", "skill://index.json", "skill://lint/SKILL.md", "skill://lint/references/rules.md", "skill://lint/scripts/lint.sh"}) {
		t.Errorf("resources %v", uris)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://lint/SKILL.md"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != lintMD || rr.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("resources/read: %+v %v", rr, err)
	}
	if rr.TTLMs != skillsTTL || rr.CacheScope != "private" || resources.CacheScope != "private" || resources.TTLMs != 0 {
		t.Errorf("cache hints: resources/read %d %q, resources/list %d %q", rr.TTLMs, rr.CacheScope, resources.TTLMs, resources.CacheScope)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://risky/SKILL.md"}); err == nil {
		t.Error("resources/read of a withheld skill succeeded")
	}

	sl, err := mcp.CallCustomMethod[*skillsListParams, *skillsListResult](ctx, cs, methodSkillsList, &skillsListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sl.Skills) != 2 || sl.ResultType != "complete" || sl.Skills[1].URI != "skill://lint/SKILL.md" ||
		sl.Skills[1].Frontmatter["license"] != "MIT" || len(sl.Skills[1].Resources) != 3 {
		t.Errorf("skills/list: %+v", sl)
	}
	if sl.TTLMs != skillsTTL || sl.CacheScope != "private" {
		t.Errorf("skills/list cache hints: %d %q", sl.TTLMs, sl.CacheScope)
	}
	sg, err := mcp.CallCustomMethod[*skillsGetParams, *skillsGetResult](ctx, cs, methodSkillsGet, &skillsGetParams{URI: "skill://lint/SKILL.md"})
	if err != nil || sg.Skill.Frontmatter["name"] != "lint" {
		t.Errorf("skills/get: %+v %v", sg, err)
	}
	if _, err := mcp.CallCustomMethod[*skillsGetParams, *skillsGetResult](ctx, cs, methodSkillsGet, &skillsGetParams{URI: "skill://risky/SKILL.md"}); err == nil ||
		!strings.Contains(err.Error(), "no skill at") {
		t.Errorf("skills/get of a withheld skill: %v", err)
	}
}

func TestMCPInMemory(t *testing.T) {
	f := newFixture(t)
	exercise(t, connect(t, f, f.viewer, Options{}))
}

func TestMCPStreamableHTTP(t *testing.T) {
	f := newFixture(t)
	ts := httptest.NewServer(HTTPHandler(f.svc, HTTPOptions{}))
	t.Cleanup(ts.Close)
	tr := &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearerTransport(f.secrets[skilld.RoleViewer])}}
	exercise(t, clientOn(t, tr))

	for name, auth := range map[string]string{"none": "", "unknown token": "Bearer skd_nottherealtoken", "basic": "Basic abc"} {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: status %d, WWW-Authenticate %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

// initializeBody opens a session.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// send makes one streamable HTTP request by hand, with secret's token,
// on session when given; the body is closed at the end of the test.
func send(t *testing.T, url, method, secret, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// A session belongs to its token: another valid token cannot ride on it.
func TestMCPHTTPSessionBoundToToken(t *testing.T) {
	f := newFixture(t)
	ts := httptest.NewServer(HTTPHandler(f.svc, HTTPOptions{}))
	t.Cleanup(ts.Close)
	resp := send(t, ts.URL, "POST", f.secrets[skilld.RoleViewer], "", initializeBody)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, session)
	}
	resp = send(t, ts.URL, "POST", f.secrets[skilld.RoleMember], session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another token on the session: status %d, want 403", resp.StatusCode)
	}
}

func bearerTransport(secret string) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+secret)
		return http.DefaultTransport.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The token's role limits what the management tools may do: a viewer
// reads, a member writes, and the new skill is disclosed at once.
func TestMCPViewerAndMemberRoles(t *testing.T) {
	f := newFixture(t)
	create := map[string]any{"files": map[string]any{"SKILL.md": "---\nname: fresh\ndescription: New.\n---\nHi.\n"}}

	viewer := connect(t, f, f.viewer, Options{ManagementTools: true})
	out, isErr := call(t, viewer, "skills_create", create)
	if !isErr || !strings.Contains(out, "(forbidden)") || !strings.Contains(out, "member role") {
		t.Errorf("viewer skills_create: %v %s", isErr, out)
	}
	if out, isErr := call(t, viewer, toolActivateSkill, map[string]any{"skill_name": "lint"}); isErr {
		t.Errorf("viewer activate_skill: %s", out)
	}

	member := connect(t, f, f.member, Options{ManagementTools: true})
	if out, isErr := call(t, member, "skills_create", create); isErr {
		t.Fatalf("member skills_create: %s", out)
	}
	tools, err := member.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == toolActivateSkill {
			b, _ := json.Marshal(tl.InputSchema)
			if !strings.Contains(string(b), `"fresh"`) {
				t.Errorf("the enum was not refreshed after the create: %s", b)
			}
		}
	}
	if out, isErr := call(t, member, toolActivateSkill, map[string]any{"skill_name": "fresh"}); isErr || !strings.Contains(out, "Hi.") {
		t.Errorf("activate the new skill: %s", out)
	}
}

// Activation keeps to the entry budget: a SKILL.md above a tenth of the
// window is summarized, and one whose summary cannot fit is refused.
func TestMCPActivationBudget(t *testing.T) {
	f := newFixture(t)
	body := strings.Repeat("Check every exported name has a comment that says why. ", 400)
	if _, err := f.svc.CreateSkill(t.Context(), f.admin, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": "---\nname: big\ndescription: A long skill.\n---\n" + body}}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, f, f.viewer, Options{Window: 20000})
	out, isErr := call(t, cs, toolActivateSkill, map[string]any{"skill_name": "big"})
	if isErr || !strings.Contains(out, "more than the 2000 allowed for one skill") || !strings.Contains(out, `read_skill_file {"skill_name": "big", "path": "SKILL.md"}`) {
		t.Errorf("summary:\n%.600s", out)
	}
	cs = connect(t, f, f.viewer, Options{Window: 500})
	out, isErr = call(t, cs, toolActivateSkill, map[string]any{"skill_name": "big"})
	if !isErr || !strings.Contains(out, "(too_large)") {
		t.Errorf("refusal: %s", out)
	}
}

func TestMCPFrontmatter(t *testing.T) {
	fm, err := frontmatter([]byte("---\r\nname: x\r\ndescription: \"d: e\"\r\nmetadata:\r\n  version: \"2\"\r\n---\r\nbody\n"))
	if err != nil || fm["name"] != "x" || fm["description"] != "d: e" || fm["metadata"].(map[string]any)["version"] != "2" {
		t.Errorf("frontmatter %v %v", fm, err)
	}
	if _, err := frontmatter([]byte("no frontmatter")); skilld.ErrorCode(err) != skilld.EINTEGRITY {
		t.Errorf("missing frontmatter: %v", err)
	}
}

func TestMCPURIs(t *testing.T) {
	for _, c := range []struct{ skill, file string }{{"lint", "SKILL.md"}, {"lint", "references/a b.md"}, {"x", "scripts/run.sh"}} {
		uri := fileURI(c.skill, c.file)
		s, f, err := parseURI(uri)
		if err != nil || s != c.skill || f != c.file {
			t.Errorf("%s → %q %q %v", uri, s, f, err)
		}
	}
	for _, bad := range []string{"file:///etc/passwd", "skill://lint", "skill:///SKILL.md", "skill://lint/SKILL.md?x=1"} {
		if _, _, err := parseURI(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

// A browser page of another origin is refused before anything else; the
// server's own origin, a configured one and clients without Origin pass.
func TestMCPHTTPOrigin(t *testing.T) {
	f := newFixture(t)
	allowed, err := ParseOrigins(" https://App.example.com:443 ,http://localhost:3000")
	if err != nil || !slices.Equal(allowed, []string{"https://app.example.com", "http://localhost:3000"}) {
		t.Fatalf("ParseOrigins: %v %v", allowed, err)
	}
	if _, err := ParseOrigins("https://app.example.com/path"); err == nil || skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("an origin with a path: %v", err)
	}
	ts := httptest.NewServer(HTTPHandler(f.svc, HTTPOptions{AllowedOrigins: allowed}))
	t.Cleanup(ts.Close)
	initialize := func(origin string) (int, string) {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(initializeBody))
		req.Header.Set("Authorization", "Bearer "+f.secrets[skilld.RoleViewer])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		return resp.StatusCode, body.String()
	}
	for _, origin := range []string{"https://evil.example", "null", "http://localhost:3001", "https://localhost:3000"} {
		status, body := initialize(origin)
		if status != http.StatusForbidden || !strings.Contains(body, `"forbidden"`) || !strings.Contains(body, strings.ReplaceAll(origin, `"`, `\"`)) {
			t.Errorf("origin %s: %d %s", origin, status, body)
		}
	}
	for _, origin := range []string{"", ts.URL, "http://localhost:3000", "https://app.example.com"} {
		if status, body := initialize(origin); status != http.StatusOK {
			t.Errorf("origin %q: %d %s", origin, status, body)
		}
	}
	// The SDK's client, from an allowed origin, does its whole work.
	tr := &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Origin", "https://app.example.com")
		return bearerTransport(f.secrets[skilld.RoleViewer]).RoundTrip(r)
	})}}
	exercise(t, clientOn(t, tr))
}

// Sessions are limited per token (429) and in all (503), each with
// Retry-After; a deleted session gives its place back. Closing the
// limiter (the server stopping) ends a session's open GET stream at once
// with a retry field and refuses new sessions.
func TestMCPHTTPSessionLimits(t *testing.T) {
	f := newFixture(t)
	lim := streamlimit.New(streamlimit.Config{What: "MCP sessions", PerToken: 2, Total: 3})
	ts := httptest.NewServer(HTTPHandler(f.svc, HTTPOptions{Sessions: lim}))
	t.Cleanup(ts.Close)
	open := func(secret string) string {
		t.Helper()
		resp := send(t, ts.URL, "POST", secret, "", initializeBody)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %d", resp.StatusCode)
		}
		return resp.Header.Get("Mcp-Session-Id")
	}
	refused := func(secret string, status int, code string) {
		t.Helper()
		resp := send(t, ts.URL, "POST", secret, "", initializeBody)
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		if resp.StatusCode != status || resp.Header.Get("Retry-After") != "5" || !strings.Contains(body.String(), `"`+code+`"`) ||
			!strings.Contains(body.String(), `"details":[{"field":"retry_after","message":"5"}]`) {
			t.Errorf("a session over the limit: %d, Retry-After %q, %s; want %d %s", resp.StatusCode, resp.Header.Get("Retry-After"), body.String(), status, code)
		}
	}
	viewer, member, admin := f.secrets[skilld.RoleViewer], f.secrets[skilld.RoleMember], f.secrets[skilld.RoleAdmin]
	first := open(viewer)
	open(viewer)
	refused(viewer, http.StatusTooManyRequests, skilld.ERATELIMITED)
	open(member)
	refused(admin, http.StatusServiceUnavailable, skilld.EUNAVAILABLE)
	// Requests on an open session are not new sessions.
	if resp := send(t, ts.URL, "POST", viewer, first, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a notification on a session: %d", resp.StatusCode)
	}
	if resp := send(t, ts.URL, "DELETE", viewer, first, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	for deadline := time.Now().Add(5 * time.Second); lim.Open() != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions held after one was deleted, want 2", lim.Open())
		}
	}
	session := open(viewer)

	stream := send(t, ts.URL, "GET", viewer, session, "")
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", stream.StatusCode)
	}
	lim.Close()
	done := make(chan []byte)
	go func() {
		var b bytes.Buffer
		b.ReadFrom(stream.Body)
		done <- b.Bytes()
	}()
	select {
	case b := <-done:
		if !strings.HasSuffix(string(b), "retry: 5000\n\n") {
			t.Errorf("the GET stream ended without a retry field: %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the GET stream did not end when the limiter closed")
	}
	refused(admin, http.StatusServiceUnavailable, skilld.EUNAVAILABLE)
}
