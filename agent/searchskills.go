package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/skillsearch"
)

// SearchSkills is the name of the tool that finds the skills a catalog
// too small for all of them leaves unlisted.
const SearchSkills = "search_skills"

// Limits of search_skills' answer: the matches it returns, and the
// characters of each description it quotes.
const (
	searchResults     = 8
	searchDescription = 300
	// closeMatches is how many names an unknown skill_name suggests.
	closeMatches = 3
)

// searchTool builds search_skills: one required string, the query. It is
// offered when the catalog does not list every disclosed skill, and it
// searches only those (never a withheld skill, nor one only the user may
// invoke).
func (r *run) searchTool() *tool.Tool {
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"query": {Type: "string", Description: "what the task needs, in a few words (for example: merge PDF files, write release notes)"},
		},
		Required:             []string{"query"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	return &tool.Tool{
		Name: SearchSkills,
		Description: fmt.Sprintf("Find skills by what they do among the %d available, including those the list of available skills leaves out. Returns the best matches' names and descriptions; activate one with activate_skill.",
			len(r.disclosed)),
		Schema:     schema,
		Idempotent: true,
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			var p struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(args, &p); err != nil || strings.TrimSpace(p.Query) == "" {
				return "", skilld.Errorf(skilld.EINVALID, "search_skills needs {\"query\": \"…\"}: a few words about what the task needs")
			}
			return r.searchSkills(ctx, p.Query), nil
		},
	}
}

// searchSkills answers a query with the best matching disclosed skills.
func (r *run) searchSkills(ctx context.Context, query string) string {
	hits := r.index().Search(query, searchResults)
	ev := SkillsSearched{QueryChars: utf8.RuneCountInString(query), Results: []string{}}
	var b strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&b, "No skill matches %q. Try other words: what the task is about, the file types or tools it involves.", query)
	} else {
		fmt.Fprintf(&b, "Skills matching %q, best first:\n", query)
	}
	for _, h := range hits {
		s := r.disclosed[h.Index]
		ev.Results = append(ev.Results, s.Name)
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, cut(strings.Join(strings.Fields(s.Description), " "), searchDescription))
	}
	if len(hits) > 0 {
		b.WriteString("Activate one with activate_skill and its exact name.")
	}
	r.emit(ctx, ev)
	return b.String()
}

// index returns the run's search index of the disclosed skills, built
// (or found in the agent's cache) at the first search.
func (r *run) index() *skillsearch.Index {
	if r.searchIndex == nil {
		docs := make([]skillsearch.Skill, len(r.disclosed))
		for i, s := range r.disclosed {
			docs[i] = skillsearch.Skill{Name: s.Name, Description: s.Description, Headings: s.Headings}
		}
		r.searchIndex = r.cfg.SkillIndexes.Index(docs)
	}
	return r.searchIndex
}

// unknownSkill is the error for a skill_name that names no skill the
// model may activate. When the catalog does not list every skill, the
// model may have guessed a name: the error points to search_skills and
// names the closest matches.
func (r *run) unknownSkill(name string) error {
	if r.cat.unlisted == 0 {
		return skilld.Errorf(skilld.ENOTFOUND, "skill '%s' is not attached to this agent", name)
	}
	msg := fmt.Sprintf("no skill named '%s' is available: use a name exactly as the list of available skills or search_skills gives it", name)
	if r.baseOffers(SearchSkills) {
		msg += "; find skills by what they do with search_skills"
	}
	var near []string
	for _, h := range r.index().Search(name, closeMatches) {
		near = append(near, r.disclosed[h.Index].Name)
	}
	if len(near) > 0 {
		msg += "; the closest names: " + strings.Join(near, ", ")
	}
	return skilld.Errorf(skilld.ENOTFOUND, "%s", msg)
}
