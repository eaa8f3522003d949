package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// allResources follows resources/list's cursors to the end, returning
// every URI listed and how many pages it took.
func allResources(t *testing.T, cs *mcp.ClientSession) ([]string, int) {
	t.Helper()
	var uris []string
	pages := 0
	for cursor := ""; ; {
		res, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" {
			return uris, pages
		}
	}
}

// resources/list pages through every file of every skill: each exactly
// once, the index on the first page, a page's size bounded by the page and
// not by the workspace.
func TestMCPResourcePages(t *testing.T) {
	n := 2*resourcePageSkills + 7
	svc, secret := seedWorkspace(t, n)
	viewer, err := svc.Authenticate(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	cs := clientOn(t, serve(t, svc, viewer, Options{}))
	uris, pages := allResources(t, cs)
	want := []string{indexURI}
	for i := range n {
		for _, f := range []string{"SKILL.md", "references/notes.md", "scripts/run.sh"} {
			want = append(want, fmt.Sprintf("skill://skill-%05d/%s", i, f))
		}
	}
	if uris[0] != indexURI {
		t.Errorf("the first resource is %s, not the index", uris[0])
	}
	sorted := slices.Clone(uris)
	slices.Sort(sorted)
	slices.Sort(want)
	if !slices.Equal(sorted, want) {
		t.Errorf("listed %d resources (%d distinct), want %d", len(uris), len(slices.Compact(sorted)), len(want))
	}
	if wantPages := (n + resourcePageSkills - 1) / resourcePageSkills; pages != wantPages {
		t.Errorf("%d pages, want %d", pages, wantPages)
	}

	// A cursor is an offset this server gave out; anything else is the
	// client's error, and one past the end is an empty last page.
	for _, bad := range []string{"x", "-1"} {
		if _, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: bad}); err == nil || !strings.Contains(err.Error(), "invalid cursor") {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
	res, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: fmt.Sprint(n + 5)})
	if err != nil || len(res.Resources) != 0 || res.NextCursor != "" {
		t.Errorf("cursor past the end: %+v %v", res, err)
	}
}

// notices counts the list_changed notifications a client gets.
type notices struct{ tools, resources chan struct{} }

func noticed(ch chan struct{}) func() {
	return func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (n notices) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { noticed(n.tools)() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { noticed(n.resources)() },
	}
}

// wait blocks until ch got a notification; a missing one fails the test
// when its context ends.
func wait(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-t.Context().Done():
		t.Fatalf("no %s notification", what)
	}
}

// Whatever changes the workspace's skills or policy shows in the next
// list of an open session, told to the client, though sessions share
// what they read: the revision the lists are kept under moves.
func TestMCPViewFollowsRevision(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	n := notices{tools: make(chan struct{}, 1), resources: make(chan struct{}, 1)}
	cs := clientWith(t, serve(t, f.svc, f.viewer, Options{}), n.options())
	// A second session of the same workspace shares the view.
	other := connect(t, f, f.viewer, Options{})
	check := func(step string, want []string) {
		t.Helper()
		for _, s := range []*mcp.ClientSession{cs, other} {
			if got := enumOf(t, s); !slices.Equal(got, want) {
				t.Errorf("%s: enum %v, want %v", step, got, want)
			}
			if got := skillMDNames(t, s); !slices.Equal(got, want) {
				t.Errorf("%s: SKILL.md resources %v, want %v", step, got, want)
			}
		}
		out, _ := call(t, cs, toolListSkills, nil)
		for _, name := range want {
			if !strings.Contains(out, `"name": "`+name+`"`) {
				t.Errorf("%s: list_skills lacks %s: %s", step, name, out)
			}
		}
	}
	check("start", []string{"commit-message", "lint"})

	deploy := "---\nname: deploy\ndescription: Deploys.\n---\nShip it.\n"
	if _, err := f.svc.CreateSkill(ctx, f.admin, service.CreateSkillParams{Files: map[string]string{"SKILL.md": deploy}}); err != nil {
		t.Fatal(err)
	}
	check("a skill added", []string{"commit-message", "deploy", "lint"})
	wait(t, n.tools, "tools/list_changed")
	wait(t, n.resources, "resources/list_changed")

	// A new version is a new package: activation renders the new one.
	if _, err := f.svc.ReplaceSkillFiles(ctx, f.admin, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: "deploy"},
		Files: map[string]string{"SKILL.md": strings.Replace(deploy, "Ship it.", "Ship it carefully.", 1)}}); err != nil {
		t.Fatal(err)
	}
	if out, isErr := call(t, cs, toolActivateSkill, map[string]any{"skill_name": "deploy"}); isErr || !strings.Contains(out, "Ship it carefully.") {
		t.Errorf("activate_skill after a new version: %s", out)
	}
	if uris, _ := allResources(t, cs); !slices.Contains(uris, "skill://deploy/SKILL.md") {
		t.Errorf("resources after a new version: %v", uris)
	}
	wait(t, n.resources, "resources/list_changed")

	// The policy is part of the revision: lifting the rule discloses the
	// registry's skill, restoring it withholds it again.
	if _, err := f.svc.PutPolicy(ctx, f.admin, service.PutPolicyParams{}); err != nil {
		t.Fatal(err)
	}
	check("the policy lifted", []string{"commit-message", "deploy", "lint", "risky"})
	if _, err := f.svc.PutPolicy(ctx, f.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, Registry: "acme"}}}); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.DeleteSkill(ctx, f.admin, service.DeleteSkillParams{SkillRef: service.SkillRef{ID: "deploy"}}); err != nil {
		t.Fatal(err)
	}
	check("a skill deleted, the policy back", []string{"commit-message", "lint"})
	if out, isErr := call(t, cs, toolActivateSkill, map[string]any{"skill_name": "deploy"}); !isErr || !strings.Contains(out, "not_found") {
		t.Errorf("activate_skill of a deleted skill: %s", out)
	}

	// A rule requiring signatures has no revision: everything is read
	// each time, with the same answers.
	if _, err := f.svc.PutPolicy(ctx, f.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{
		{Effect: skilld.EffectDeny, Registry: "acme", RequireSignature: &skilld.SignatureRequirement{Key: true}}}}); err != nil {
		t.Fatal(err)
	}
	check("a signature rule", []string{"commit-message", "lint"})
	if out, isErr := call(t, cs, toolActivateSkill, map[string]any{"skill_name": "lint"}); isErr || !strings.Contains(out, "Run scripts/lint.sh") {
		t.Errorf("activate_skill under a signature rule: %s", out)
	}
	if out, isErr := call(t, cs, toolActivateSkill, map[string]any{"skill_name": "risky"}); !isErr || !strings.Contains(out, "not_found") {
		t.Errorf("activate_skill of an unsigned skill under a signature rule: %s", out)
	}
}

// Workspaces at the same revision never share a view: each session sees
// its own workspace's skills.
func TestMCPViewPerWorkspace(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	opts := Options{caches: newCaches()} // one cache for both, as HTTPHandler's sessions share one
	var actors []service.Actor
	for _, ws := range []string{"red", "blue"} {
		if _, err := f.svc.CreateWorkspace(ctx, f.admin, service.CreateWorkspaceParams{Name: ws}); err != nil {
			t.Fatal(err)
		}
		a, err := f.svc.In(ctx, f.admin, ws)
		if err != nil {
			t.Fatal(err)
		}
		md := "---\nname: " + ws + "-only\ndescription: Only in " + ws + ".\n---\nHi.\n"
		if _, err := f.svc.CreateSkill(ctx, a, service.CreateSkillParams{Files: map[string]string{"SKILL.md": md}}); err != nil {
			t.Fatal(err)
		}
		actors = append(actors, a)
	}
	revs := make([]string, len(actors))
	for i, a := range actors {
		var err error
		if revs[i], err = f.svc.DisclosedRevision(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if revs[0] != revs[1] {
		t.Logf("the workspaces' revisions differ (%s, %s): the test shows less than it could", revs[0], revs[1])
	}
	for i, want := range []string{"red-only", "blue-only"} {
		cs := clientOn(t, serve(t, f.svc, actors[i], opts))
		if got := enumOf(t, cs); !slices.Equal(got, []string{want}) {
			t.Errorf("enum %v, want [%s]", got, want)
		}
		if uris, _ := allResources(t, cs); !slices.Equal(uris, []string{indexURI, "skill://" + want + "/SKILL.md"}) {
			t.Errorf("resources %v", uris)
		}
	}
}
