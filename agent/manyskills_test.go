package agent_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillsearch"
)

// manySkills makes n skills sharing one package (cheap to build), with
// descriptions drawn from a small vocabulary, and one target skill at
// position at whose description says what no other does.
func manySkills(t testing.TB, pkgs *agent.MemoryPackages, n, at int) []agent.Skill {
	t.Helper()
	p, err := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("---\nname: x\ndescription: x\n---\nDo the thing.\n")}}, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	digest := pkgs.Add(p)
	words := strings.Fields("convert export import summarize validate deploy lint format test review plan draft translate index archive " +
		"csv json yaml markdown pdf image audio video log report invoice ticket schema query cluster bucket")
	rng := rand.New(rand.NewPCG(7, 7))
	skills := make([]agent.Skill, n)
	for i := range skills {
		var d []string
		for range 12 {
			d = append(d, words[rng.IntN(len(words))])
		}
		skills[i] = agent.Skill{ID: fmt.Sprint("s", i), Name: fmt.Sprintf("skill-%05d-%s", i, words[i%len(words)]), Description: strings.Join(d, " "), Digest: digest, Files: []string{"SKILL.md"}}
	}
	skills[at].Name = "tide-table-forecaster"
	skills[at].Description = "Forecast tide tables for a harbour from its tidal constituents, and plot high and low water."
	skills[at].Headings = []string{"Harmonic analysis", "Plotting the tide curve"}
	return skills
}

// o200k is the tokenizer of OpenAI's recent models, counting as runs do.
func o200k(t testing.TB) agent.Counter {
	t.Helper()
	tok, err := tokenizer.NewCache().Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestTenThousandSkills: an agent with 10,000 attached skills. The catalog
// lists some names within its budget and says how many more there are;
// activate_skill has no enum; search_skills finds the target skill by
// what it does; a guessed name is refused with a pointer to search_skills
// and the closest names; and activate_skill activates the name the
// search returned. Every request's catalog stays within its budget.
func TestTenThousandSkills(t *testing.T) {
	tok := o200k(t)
	pkgs := &agent.MemoryPackages{}
	skills := manySkills(t, pkgs, 10_000, 7777)
	target := skills[7777].Name
	noEnum := func(t *testing.T, req *model.Request) {
		t.Helper()
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Name)
			if tl.Name == agent.ActivateSkill && strings.Contains(string(tl.Schema), "enum") {
				t.Errorf("activate_skill has an enum of %d bytes", len(tl.Schema))
			}
		}
		if !slices.Contains(names, agent.SearchSkills) {
			t.Errorf("tools %v: no search_skills", names)
		}
	}
	var found string
	m := script(t,
		func(t *testing.T, req *model.Request) *model.Response {
			noEnum(t, req)
			if !strings.Contains(req.System, "more skills are not listed. Call search_skills") {
				t.Errorf("the catalog does not say skills are unlisted:\n%.500s", req.System)
			}
			return calls(agent.SearchSkills, map[string]string{"query": "predict high water at the harbour"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			res := req.Messages[len(req.Messages)-1].Content
			first := regexp.MustCompile(`(?m)^- ([^:]+):`).FindStringSubmatch(res)
			if first == nil {
				t.Fatalf("search_skills answered %q", res)
			}
			found = first[1]
			return calls(agent.ActivateSkill, map[string]string{"skill_name": "tide-forecaster"}, agent.ActivateSkill, map[string]string{"skill_name": found})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			guess, act := req.Messages[len(req.Messages)-2], req.Messages[len(req.Messages)-1]
			if !guess.IsError || !strings.Contains(guess.Content, "search_skills") || !strings.Contains(guess.Content, target) {
				t.Errorf("a guessed name was answered %q", guess.Content)
			}
			if act.IsError || !strings.Contains(act.Content, "Do the thing.") {
				t.Errorf("the activation was answered %q", act.Content)
			}
			return &model.Response{Message: model.Message{Content: "done"}}
		},
	)
	a, err := agent.New(agent.Config{Model: m, Window: 128_000, Tokenizer: tok, Skills: skills, Packages: pkgs, SkillIndexes: &skillsearch.Cache{}})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "many", Input: "When is high water at Brest tomorrow?"})
	if found != target {
		t.Errorf("search_skills found %q first, want %q", found, target)
	}
	short := payloads[agent.CatalogShortened](events)
	if len(short) != 1 {
		t.Fatalf("catalog.trimmed: %+v", short)
	}
	c := short[0]
	if c.Level != "some names" || c.OverBudget || c.Tokens > c.Budget || len(c.Listed) == 0 || len(c.Listed)+c.Unlisted != len(skills) {
		t.Errorf("catalog.trimmed: level %s, %d of %d tokens, %d listed, %d unlisted", c.Level, c.Tokens, c.Budget, len(c.Listed), c.Unlisted)
	}
	for _, e := range payloads[agent.LLMCallStarted](events) {
		if cat := e.Context.Catalog; cat == nil || cat.Tokens > cat.Budget || cat.Level != "some names" || len(cat.Skills)+cat.SkillsMore != len(c.Listed) {
			t.Errorf("request %d's catalog: %+v", e.Iteration, cat)
		}
	}
	searched := payloads[agent.SkillsSearched](events)
	if len(searched) != 1 || len(searched[0].Results) == 0 || searched[0].Results[0] != target || searched[0].QueryChars != len("predict high water at the harbour") {
		t.Errorf("skills.searched: %+v", searched)
	}
	if act := payloads[agent.SkillActivated](events); len(act) != 1 || act[0].Skill != target {
		t.Errorf("skill.activated: %+v", act)
	}
	if last := events[len(events)-1]; last.Type != agent.EventTaskCompleted {
		t.Errorf("the task ended with %s", last.Type)
	}
}

// TestCatalogRotation: when only some names fit, most slots list the
// first skills in the order given, the rest rotate with the task's ID,
// and over many tasks every skill is listed.
func TestCatalogRotation(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	skills := manySkills(t, pkgs, 300, 150)
	listed := map[string]int{}
	for i := range 200 {
		m := script(t, func(*testing.T, *model.Request) *model.Response {
			return &model.Response{Message: model.Message{Content: "done"}}
		})
		a, err := agent.New(agent.Config{Model: m, Window: 30_000, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs})
		if err != nil {
			t.Fatal(err)
		}
		c := payloads[agent.CatalogShortened](collect(t, a, agent.Task{ID: fmt.Sprint("task-", i), Input: "hi"}))
		if len(c) != 1 || c[0].Level != "some names" || c[0].Tokens > c[0].Budget {
			t.Fatalf("catalog.trimmed: %+v", c)
		}
		head := len(c[0].Listed) - len(c[0].Listed)/4
		for j, name := range c[0].Listed[:head] {
			if name != skills[j].Name {
				t.Fatalf("task %d lists %s in slot %d, want %s", i, name, j, skills[j].Name)
			}
		}
		for _, name := range c[0].Listed {
			listed[name]++
		}
	}
	for _, s := range skills {
		if listed[s.Name] == 0 {
			t.Errorf("%s was never listed in 200 tasks", s.Name)
		}
	}
}

// TestFitCatalogSomeNames: FitCatalog reports a catalog that cannot list
// every name, and how many it leaves out.
func TestFitCatalogSomeNames(t *testing.T) {
	skills := manySkills(t, &agent.MemoryPackages{}, 2000, 0)
	f := agent.FitCatalog(skills, 32_000, runeCounter{}.Count)
	if f.Level != "some names" || f.DescriptionCut != -1 || f.Unlisted == 0 || f.Unlisted >= len(skills) || f.Tokens > f.Budget {
		t.Errorf("%+v", f)
	}
}

// TestSearchSkillsPolicy: search_skills passes the tool policy like any
// tool: denied, it is not offered and the catalog does not mention it;
// with activate_skill denied there is no catalog and no search either.
func TestSearchSkillsPolicy(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	skills := manySkills(t, pkgs, 2000, 0)
	for _, tc := range []struct {
		deny       string
		search     bool
		catalogSay string
	}{
		{"", true, "Call search_skills"},
		{agent.SearchSkills, false, "more skills are not listed."},
		{agent.ActivateSkill, false, ""},
	} {
		var req *model.Request
		m := script(t, func(_ *testing.T, r *model.Request) *model.Response {
			req = r
			return &model.Response{Message: model.Message{Content: "done"}}
		})
		cfg := agent.Config{Model: m, Window: 32_000, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs}
		if tc.deny != "" {
			cfg.Policy = policyDeny(tc.deny)
		}
		a, err := agent.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		collect(t, a, agent.Task{ID: "p", Input: "hi"})
		if got := slices.Contains(toolNames(req), agent.SearchSkills); got != tc.search {
			t.Errorf("deny %q: search_skills offered %v", tc.deny, got)
		}
		if tc.catalogSay == "" && strings.Contains(req.System, "Available skills") || !strings.Contains(req.System, tc.catalogSay) ||
			!tc.search && strings.Contains(req.System, agent.SearchSkills) {
			t.Errorf("deny %q: system prompt %.300q", tc.deny, req.System[max(0, len(req.System)-300):])
		}
	}
}

// BenchmarkCatalog10k: settling the catalog of 10,000 skills at a 128k
// window (level some names), as each task's start does.
func BenchmarkCatalog10k(b *testing.B) {
	tok := o200k(b)
	skills := manySkills(b, &agent.MemoryPackages{}, 10_000, 0)
	for b.Loop() {
		agent.FitCatalog(skills, 128_000, tok.Count)
	}
}

// BenchmarkCatalog10kFloor is the floor: rendering every name once and
// counting the text, the least a renderer that tries names only could do.
func BenchmarkCatalog10kFloor(b *testing.B) {
	tok := o200k(b)
	skills := manySkills(b, &agent.MemoryPackages{}, 10_000, 0)
	for b.Loop() {
		var sb strings.Builder
		for _, s := range skills {
			sb.WriteString("- " + s.Name + "\n")
		}
		tok.Count(sb.String())
	}
}

// TestCatalogRank: a catalog that cannot name every skill lists the
// ranked ones first, highest first, then the others in the order given.
func TestCatalogRank(t *testing.T) {
	skills := manySkills(t, &agent.MemoryPackages{}, 300, 0)
	last, mid := len(skills)-1, len(skills)/2
	skills[last].Rank, skills[mid].Rank = 9, 3
	m := script(t, func(*testing.T, *model.Request) *model.Response {
		return &model.Response{Message: model.Message{Content: "done"}}
	})
	a, err := agent.New(agent.Config{Model: m, Window: 30_000, Tokenizer: runeCounter{}, Skills: skills, Packages: &agent.MemoryPackages{}})
	if err != nil {
		t.Fatal(err)
	}
	c := payloads[agent.CatalogShortened](collect(t, a, agent.Task{ID: "ranked", Input: "hi"}))
	if len(c) != 1 || len(c[0].Listed) < 4 {
		t.Fatalf("catalog.trimmed: %+v", c)
	}
	want := []string{skills[last].Name, skills[mid].Name, skills[0].Name, skills[1].Name}
	if got := c[0].Listed[:4]; !slices.Equal(got, want) {
		t.Errorf("listed first %v, want %v", got, want)
	}
}
