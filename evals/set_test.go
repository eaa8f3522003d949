package evals_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/evals"
)

func TestParseGood(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "sets", "good.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := evals.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	cases := evals.SkillCases(s)
	want := []evals.Case{
		{Query: "What columns does data.csv have?", Expect: "csv-inspector", Owner: "csv-inspector"},
		{Query: "Summarize sales.csv by region", Expect: "csv-inspector", Owner: "csv-inspector"},
		{Query: "Write release notes for v2", Owner: "csv-inspector"},
		{Query: "Draft the changelog", Expect: "release-notes", Owner: "csv-inspector"},
	}
	if len(cases) != len(want) {
		t.Fatalf("%d cases, want %d", len(cases), len(want))
	}
	for i := range want {
		if cases[i] != want[i] {
			t.Errorf("case %d: %+v, want %+v", i, cases[i], want[i])
		}
	}
}

// Every bad set is refused with EINVALID naming the field at fault.
func TestParseErrorsNameTheField(t *testing.T) {
	cases := []struct{ file, field, text string }{
		{"unknown-field.json", "weight", "unknown field"},
		{"wrong-type.json", "evals.should_trigger", "must be a JSON bool"},
		{"empty-query.json", "evals[0].query", "is empty"},
		{"negative-expected.json", "evals[0].expected_skill", "should_trigger is false"},
		{"two-documents.json", "", "more than one JSON document"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "sets", c.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = evals.Parse(data)
			checkFieldError(t, err, c.field, c.text)
		})
	}
	inline := []struct{ doc, field, text string }{
		{`{"evals": [{"query": "q", "should_trigger": true}]}`, "skill_name", "skill_name is required"},
		{`{"skill_name": "x", "evals": []}`, "evals", "at least one query"},
		{`{"skill_name": "x", "evals": [{"query": "q", "should_trigger": true}, {"query": "q", "should_trigger": false}]}`, "evals[1].query", "repeats evals[0].query"},
		{`{"skill_name": "x", "evals": [{"query": "` + strings.Repeat("a", evals.MaxQueryChars+1) + `", "should_trigger": true}]}`, "evals[0].query", "longer than"},
		{`[1, 2]`, "", "is not valid JSON"},
	}
	for _, c := range inline {
		_, err := evals.Parse([]byte(c.doc))
		checkFieldError(t, err, c.field, c.text)
	}
}

func TestCheckAgentNeedsExpectedSkill(t *testing.T) {
	err := evals.CheckAgent([]skilld.EvalCase{{Query: "a", ShouldTrigger: false}, {Query: "b", ShouldTrigger: true}})
	checkFieldError(t, err, "config.evals[1].expected_skill", "is required")
	if err := evals.CheckAgent([]skilld.EvalCase{{Query: "b", ShouldTrigger: true, ExpectedSkill: "x"}}); err != nil {
		t.Error(err)
	}
}

func checkFieldError(t *testing.T, err error, field, text string) {
	t.Helper()
	var se *skilld.Error
	if !errors.As(err, &se) || se.Code != skilld.EINVALID {
		t.Fatalf("error %v, want invalid", err)
	}
	if !strings.Contains(se.Message, text) {
		t.Errorf("message %q does not say %q", se.Message, text)
	}
	got := ""
	if len(se.Details) > 0 {
		got = se.Details[0].Field
	}
	if got != field {
		t.Errorf("%q: field %q, want %q", se.Message, got, field)
	}
}
