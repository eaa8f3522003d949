package analytics_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/analytics"
)

// FuzzExtract reads arbitrary logs, one entry per line (a line starting
// with "m:" is a message entry, any other an event): Extract never fails,
// and its rows hold whatever the log says: one per skill in order, an
// offer and outcome from their sets, counts never negative, a first
// iteration exactly when there are activations, refusals that add up.
func FuzzExtract(f *testing.F) {
	for _, seed := range []string{
		`{"type":"task.started","withheld_tools":["activate_skill"]}`,
		"{\"type\":\"catalog.shortened\",\"level\":\"names only\"}\n{\"type\":\"llm.call.started\",\"iteration\":2}\n{\"type\":\"skill.activated\",\"skill\":\"a\"}",
		"{\"type\":\"skill.refused\",\"skill\":\"b\",\"reason\":\"it needs 12 tokens\"}\n{\"type\":\"task.failed\",\"code\":\"cancelled\"}",
		`{"type":"skills.searched","results":["a","a","zz"]}`,
		"{\"type\":\"llm.call.started\",\"iteration\":-4}\n{\"type\":\"skill.activated\",\"skill\":\"a\"}",
		"m:{\"role\":\"assistant\"}\n{\"type\":\"skill.unloaded\",\"skill\":\"c\"}\nnot json",
	} {
		f.Add([]byte(seed))
	}
	skills := []analytics.Skill{
		{Version: 1, Skill: agent.Skill{ID: "1", Name: "a", Description: "Does a."}},
		{Version: 2, Skill: agent.Skill{ID: "2", Name: "b", Description: "Does b.", Files: []string{"SKILL.md", "x.sh"}}},
		{Version: 1, Skill: agent.Skill{ID: "3", Name: "c", NoModelInvocation: true}},
		{Version: 1, Skill: agent.Skill{ID: "4", Name: "d", Withheld: "rule"}},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var log []*skilld.TaskLogEntry
		for i, line := range bytes.Split(data, []byte("\n")) {
			kind := agent.KindEvent
			if rest, ok := bytes.CutPrefix(line, []byte("m:")); ok {
				kind, line = agent.KindMessage, rest
			}
			log = append(log, &skilld.TaskLogEntry{Seq: int64(i + 1), Kind: kind, Payload: json.RawMessage(line)})
		}
		rows := analytics.Extract(skills, log)
		if len(rows) != len(skills) {
			t.Fatalf("%d rows for %d skills", len(rows), len(skills))
		}
		outcomes := append(analytics.OutcomeNames(), analytics.OutcomeUnfinished)
		for i, r := range rows {
			if r.SkillID != skills[i].ID || r.Name != skills[i].Name || r.Version != skills[i].Version {
				t.Errorf("row %d is %s/%s v%d", i, r.SkillID, r.Name, r.Version)
			}
			if !slices.Contains(analytics.Offers(), r.Offer) || !slices.Contains(outcomes, r.Outcome) {
				t.Errorf("%s: offer %q, outcome %q", r.Name, r.Offer, r.Outcome)
			}
			if (r.Offer == analytics.OfferWithheld) != (r.WithheldRule != "") {
				t.Errorf("%s: offer %s with rule %q", r.Name, r.Offer, r.WithheldRule)
			}
			if r.Activations < 0 || r.Refusals < 0 || r.Unloads < 0 || r.Found < 0 || (r.Activations > 0) != (r.FirstIteration >= 0) {
				t.Errorf("%s: %+v", r.Name, r)
			}
			sum := 0
			for _, n := range r.RefusalReasons {
				sum += n
			}
			if sum != r.Refusals {
				t.Errorf("%s: %d refusals, reasons add up to %d", r.Name, r.Refusals, sum)
			}
		}
	})
}
