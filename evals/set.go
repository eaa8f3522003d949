// Package evals runs trigger evals: does the model activate the right
// skill for a query, given an agent's real catalog and model? It parses
// eval sets (a skill package's evals/evals.json, an agent's own set),
// asks a Decider each query a number of times, and scores each skill:
// precision, recall, per-query trigger rates with Wilson intervals, false
// triggers of other skills and the tokens spent.
package evals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/skilld/skilld"
)

// Path is where a skill package carries its eval set.
const Path = "evals/evals.json"

// Limits of an eval set.
const (
	MaxCases      = 500
	MaxQueryChars = 4000
	MaxSetBytes   = 1 << 20
)

// Set is a skill package's eval set: queries that should, or should not,
// make a model activate the skill named SkillName.
type Set struct {
	SkillName string            `json:"skill_name"`
	Evals     []skilld.EvalCase `json:"evals"`
}

// Parse reads and checks an eval set. Its errors are EINVALID and name
// the field at fault (skill_name, evals[2].query, …) in their detail.
func Parse(data []byte) (*Set, error) {
	if len(data) > MaxSetBytes {
		return nil, fieldError("", "%s is %d bytes, more than the %d allowed", Path, len(data), MaxSetBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Set
	if err := dec.Decode(&s); err != nil {
		return nil, decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fieldError("", "%s holds more than one JSON document", Path)
	}
	if strings.TrimSpace(s.SkillName) == "" {
		return nil, fieldError("skill_name", "skill_name is required: the skill the set is for")
	}
	if len(s.Evals) == 0 {
		return nil, fieldError("evals", "evals is required: at least one query")
	}
	if err := checkCases("evals", s.Evals, false); err != nil {
		return nil, err
	}
	return &s, nil
}

// CheckAgent checks an agent's own eval set (config.evals): the same
// rules as a skill's, and every query that should trigger names the skill
// it expects.
func CheckAgent(cases []skilld.EvalCase) error {
	return checkCases("config.evals", cases, true)
}

func checkCases(field string, cases []skilld.EvalCase, needExpected bool) error {
	if len(cases) > MaxCases {
		return fieldError(field, "%s has %d queries, more than the %d allowed", field, len(cases), MaxCases)
	}
	seen := map[string]int{}
	for i, c := range cases {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch q := strings.TrimSpace(c.Query); {
		case q == "":
			return fieldError(at+".query", "%s.query is empty", at)
		case !utf8.ValidString(c.Query):
			return fieldError(at+".query", "%s.query is not valid UTF-8", at)
		case utf8.RuneCountInString(c.Query) > MaxQueryChars:
			return fieldError(at+".query", "%s.query is longer than %d characters", at, MaxQueryChars)
		}
		if j, dup := seen[c.Query]; dup {
			return fieldError(at+".query", "%s.query repeats %s[%d].query", at, field, j)
		}
		seen[c.Query] = i
		switch {
		case !c.ShouldTrigger && c.ExpectedSkill != "":
			return fieldError(at+".expected_skill", "%s.expected_skill names %q, but should_trigger is false (no skill should trigger)", at, c.ExpectedSkill)
		case c.ShouldTrigger && needExpected && strings.TrimSpace(c.ExpectedSkill) == "":
			return fieldError(at+".expected_skill", "%s.expected_skill is required when should_trigger is true", at)
		}
	}
	return nil
}

// fieldError is the EINVALID error of an eval set, naming the field.
func fieldError(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	e := &skilld.Error{Code: skilld.EINVALID, Message: "eval set: " + msg}
	if field != "" {
		e.Details = []skilld.Detail{{Field: field, Message: msg}}
	}
	return e
}

// decodeError names the field a JSON decoding error is about, when it
// says.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fieldError(te.Field, "%s must be a JSON %s, not %s", te.Field, te.Type.Kind(), te.Value)
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		f = strings.Trim(f, `"`)
		return fieldError(f, "unknown field %q (fields: skill_name, evals; per query: query, should_trigger, expected_skill)", f)
	}
	return fieldError("", "%s is not valid JSON: %v", Path, err)
}
