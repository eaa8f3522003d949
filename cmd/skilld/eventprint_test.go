package main

import (
	"bytes"
	"testing"

	"github.com/skilld/skilld/agent"
)

// TestPrintEnvironment: a skill's dependencies show as a line when ready
// and, when they failed, with the installer's last lines, not only in
// --json.
func TestPrintEnvironment(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(&env{stdout: &out, stderr: &bytes.Buffer{}}, false)
	for _, d := range []agent.SkillEnvironment{
		{Skill: "pdf", State: "preparing"},
		{Skill: "pdf", State: "building", Line: "Collecting pypdf", Lines: 1, ElapsedMS: 2000},
		{Skill: "pdf", State: "ready", EnvironmentLayer: &agent.EnvironmentLayer{Kinds: []string{"python"}, Key: "k", DurationMS: 2400}},
		{Skill: "docx", State: "preparing"},
		{Skill: "docx", State: "ready", EnvironmentLayer: &agent.EnvironmentLayer{Kinds: []string{"python", "node"}, Key: "k", Cached: true}},
		{Skill: "xlsx", State: "failed", Error: "installing the skill's dependencies failed (exit status 1)",
			Output: "Collecting no-such==9\nERROR: No matching distribution found for no-such==9\n"},
	} {
		p.event(agent.Event{Type: d.EventType(), Payload: d})
	}
	want := "skill pdf: dependencies ready (python, installed in 2.4s)\n" +
		"skill docx: dependencies ready (python and node, installed before)\n" +
		"skill xlsx: dependencies not installed: installing the skill's dependencies failed (exit status 1)\n" +
		"  Collecting no-such==9\n  ERROR: No matching distribution found for no-such==9\n"
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
}
