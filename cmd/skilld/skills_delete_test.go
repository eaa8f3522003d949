package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/store/storetest"
)

// TestSkillsDeleteCommand: skills delete names the agents that use the
// skill, asks on a terminal (no keeps it), does not ask from a script or
// with --yes, and says which agents lost the skill.
func TestSkillsDeleteCommand(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	member := strings.TrimSpace(s.ok(t, s.admin, "default", "tokens", "create", "m", "--role", "member"))
	flags := func(args ...string) []string {
		return append(args, "--server", s.url, "--token", member, "--workspace", "default")
	}
	create := func(name string) string {
		dir := filepath.Join(t.TempDir(), name)
		writeFiles(t, dir, map[string]string{"SKILL.md": skillText(name, "A skill to delete.")})
		return s.okJSON(t, member, "default", "skills", "create", dir)["id"].(string)
	}

	pdf := create("pdf")
	s.ok(t, member, "default", "agents", "create", "reader", "--model", "test:m", "--skill", pdf)
	s.ok(t, member, "default", "agents", "create", "writer", "--model", "test:m", "--skill", pdf)
	s.ok(t, member, "default", "agents", "create", "other", "--model", "test:m")

	code, _, errOut := runAsking(t, "n\n", flags("skills", "delete", pdf)...)
	if code != exitFailure || !strings.Contains(errOut, `skill "pdf" is used by 2 agents: reader, writer`) ||
		!strings.Contains(errOut, `delete skill "pdf" and its versions, and remove it from those agents? [y/N] `) || !strings.Contains(errOut, "not deleted") {
		t.Errorf("answering no: exit %d %s", code, errOut)
	}
	s.ok(t, member, "default", "skills", "get", pdf)
	code, _, errOut = runAsking(t, "y\n", flags("skills", "delete", pdf)...)
	if code != exitOK || !strings.Contains(errOut, `deleted skill "pdf" (`+pdf+`); removed from agents reader, writer`) {
		t.Errorf("answering yes: exit %d %s", code, errOut)
	}
	if out := s.ok(t, member, "default", "agents", "get", "reader"); strings.Contains(out, pdf) {
		t.Errorf("the agent still has the skill:\n%s", out)
	}

	// No agent: the question says only what is deleted.
	lone := create("lone")
	code, _, errOut = runAsking(t, "n\n", flags("skills", "delete", lone)...)
	if code != exitFailure || strings.Contains(errOut, "used by") || !strings.Contains(errOut, `delete skill "lone" and its versions? [y/N] `) {
		t.Errorf("a skill no agent uses: exit %d %s", code, errOut)
	}

	// From a script, and with --yes on a terminal, nothing is asked; the
	// agents are still named.
	for _, del := range []func(id string) (int, string, string){
		func(id string) (int, string, string) { return s.cli(t, member, "default", "skills", "delete", id) },
		func(id string) (int, string, string) {
			return runAsking(t, "", flags("skills", "delete", id, "--yes")...)
		},
	} {
		id := create("scripted")
		s.ok(t, member, "default", "agents", "update", "other", "--skill", id)
		if code, _, errOut := del(id); code != exitOK || strings.Contains(errOut, "[y/N]") || !strings.Contains(errOut, "removed from agents other") {
			t.Errorf("deleting without a question: exit %d %s", code, errOut)
		}
	}
	if code, _, errOut := s.cli(t, member, "default", "skills", "delete", "nope"); code != exitFailure || !strings.HasPrefix(errOut, "skilld: not_found: ") {
		t.Errorf("an unknown skill: exit %d %s", code, errOut)
	}
}
