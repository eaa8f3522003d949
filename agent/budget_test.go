package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
)

// bigSkill is a package whose SKILL.md has about tokens tokens (by
// runeCounter).
func bigSkill(t *testing.T, pkgs *agent.MemoryPackages, name string, tokens int) agent.Skill {
	t.Helper()
	md := fmt.Sprintf("---\nname: %s\ndescription: A large skill for budget tests.\n---\n# %s\n\nOPENING LINE\n%s", name, name, strings.Repeat("word ", tokens*4/5))
	p, err := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte(md)}}, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return skillFromPackage(t, pkgs, p, "id-"+name)
}

func TestBudgets(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	// Window 10,000: one entry ≤ 1,000 tokens, all entries ≤ 3,000.
	huge := bigSkill(t, pkgs, "huge", 5000)
	mid1 := bigSkill(t, pkgs, "mid-one", 900)
	mid2 := bigSkill(t, pkgs, "mid-two", 900)
	mid3 := bigSkill(t, pkgs, "mid-three", 900)
	sb := newSandbox(t)
	hugeDir := pack.SandboxDir(huge.Name, huge.ID)
	m := script(t,
		do(agent.ActivateSkill, map[string]string{"skill_name": "huge"}),
		func(t *testing.T, req *model.Request) *model.Response {
			c := req.Messages[len(req.Messages)-1].Content
			if !strings.Contains(c, "more than the 1000 allowed for one skill") || !strings.Contains(c, hugeDir+"/SKILL.md") || !strings.Contains(c, "OPENING LINE") {
				t.Errorf("summary:\n%.600s", c)
			}
			if len([]rune(c)) > 4*1000 {
				t.Errorf("summary is %d characters, over the entry budget", len([]rune(c)))
			}
			if _, err := sb.Stat(t.Context(), hugeDir+"/SKILL.md"); err != nil {
				t.Errorf("the full SKILL.md must be in the sandbox: %v", err)
			}
			return calls(agent.ActivateSkill, map[string]string{"skill_name": "mid-one"}, agent.ActivateSkill, map[string]string{"skill_name": "mid-two"},
				agent.ActivateSkill, map[string]string{"skill_name": "mid-three"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			last := req.Messages[len(req.Messages)-1]
			if !last.IsError || !strings.Contains(last.Content, "Skill 'mid-three' was not loaded") || !strings.Contains(last.Content, "3000-token skills budget") {
				t.Errorf("refusal: %+v", last)
			}
			return &model.Response{Message: model.Message{Content: "ok"}}
		},
	)
	a, err := agent.New(agent.Config{Model: m, Window: 10000, Tokenizer: runeCounter{}, Skills: []agent.Skill{huge, mid1, mid2, mid3}, Packages: pkgs, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "t", Input: "x"})
	act := payloads[agent.SkillActivated](events)
	if len(act) != 3 || !act[0].Summarized || act[1].Summarized {
		t.Errorf("activations: %+v", act)
	}
	if ref := payloads[agent.SkillRefused](events); len(ref) != 1 || ref[0].Skill != "mid-three" {
		t.Errorf("refusals: %+v", ref)
	}
}

func TestCatalogBudget(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	var skills []agent.Skill
	for i := range 100 {
		p, _ := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("x")}, {Path: fmt.Sprintf("scripts/tool-%d.sh", i), Data: []byte("y")}}, pack.Limits{})
		skills = append(skills, agent.Skill{ID: fmt.Sprint(i), Name: fmt.Sprintf("skill-%03d", i), Description: strings.Repeat("Does a very particular thing well. ", 8), Digest: pkgs.Add(p), Files: []string{"SKILL.md", "scripts/x.sh"}})
	}
	size := func(level int) int { return runeCounter{}.Count(agent.CatalogText(skills, level)) }
	// Each window's 2% budget is one token short of a level, forcing the next.
	for _, tt := range []struct {
		window int
		level  string
		has    string
	}{
		{size(0) * 50, "", "(files: SKILL.md, scripts/x.sh)"},
		{(size(0) - 1) * 50, "no file lists", "Does a very particular thing well. Does"},
		{(size(1) - 1) * 50, "descriptions shortened to 200 characters", "Does a very"},
		{(size(3) - 1) * 50, "names only", "- skill-098\n- skill-099"},
	} {
		m := script(t, func(t *testing.T, req *model.Request) *model.Response {
			if !strings.Contains(req.System, tt.has) {
				t.Errorf("window %d: catalog lacks %q", tt.window, tt.has)
			}
			return &model.Response{Message: model.Message{Content: "ok"}}
		})
		a, _ := agent.New(agent.Config{Model: m, Window: tt.window, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs})
		events := collect(t, a, agent.Task{ID: "t", Input: "x"})
		short := payloads[agent.CatalogShortened](events)
		switch {
		case tt.level == "" && len(short) != 0:
			t.Errorf("window %d: shortened %+v", tt.window, short)
		case tt.level != "" && (len(short) != 1 || short[0].Level != tt.level):
			t.Errorf("window %d: %+v, want level %q", tt.window, short, tt.level)
		}
	}
}

func TestLargeOutputs(t *testing.T) {
	sb := newSandbox(t)
	long := strings.Repeat("0123456789", 2500) // 25,000 characters
	if err := sb.WriteFile(t.Context(), "big.txt", []byte(long)); err != nil {
		t.Fatal(err)
	}
	var id string
	m := script(t,
		do(agent.ToolReadFile, map[string]string{"path": "big.txt"}),
		func(t *testing.T, req *model.Request) *model.Response {
			c := req.Messages[len(req.Messages)-1].Content
			if !strings.HasPrefix(c, long[:500]) || !strings.HasSuffix(c, long[len(long)-200:]) || len(c) > 1200 {
				t.Errorf("offloaded output (%d chars):\n%.300s", len(c), c)
			}
			_, rest, _ := strings.Cut(c, `read_tool_output with id "`)
			id, _, _ = strings.Cut(rest, `"`)
			return calls(agent.ToolReadToolOutput, map[string]any{"id": id, "offset": 16000})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			c := req.Messages[len(req.Messages)-1].Content
			if !strings.HasPrefix(c, long[16000:]) || !strings.Contains(c, "end of output") {
				t.Errorf("page:\n%.200s … %s", c, c[max(0, len(c)-80):])
			}
			return &model.Response{Message: model.Message{Content: "ok"}}
		},
	)
	a, _ := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Sandbox: sb})
	collect(t, a, agent.Task{ID: "t", Input: "x"})
	if id == "" {
		t.Fatal("no output id")
	}
}

// TestLargeActivationIsWhole: a SKILL.md over the tool-output threshold
// but within its activation budget reaches the model whole, not offloaded.
func TestLargeActivationIsWhole(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	sk := bigSkill(t, pkgs, "long", 2500) // about 10,000 characters
	m := script(t,
		do(agent.ActivateSkill, map[string]string{"skill_name": "long"}),
		func(t *testing.T, req *model.Request) *model.Response {
			c := req.Messages[len(req.Messages)-1].Content
			if n := strings.Count(c, "word"); !strings.Contains(c, "OPENING LINE") || n < 2000 || strings.Contains(c, "read_tool_output") {
				t.Errorf("activation of %d characters holds %d of 2000 words:\n%.300s", len(c), n, c)
			}
			return &model.Response{Message: model.Message{Content: "ok"}}
		},
	)
	a, err := agent.New(agent.Config{Model: m, Window: 128000, Tokenizer: runeCounter{}, Skills: []agent.Skill{sk}, Packages: pkgs})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "t", Input: "x"})
	if off := ofType(events, agent.EventToolOffloaded); len(off) != 0 {
		t.Errorf("activation offloaded: %+v", off)
	}
	if act := payloads[agent.SkillActivated](events); len(act) != 1 || act[0].Summarized {
		t.Errorf("activations: %+v", act)
	}
}

func TestApprovalAndSandboxEscape(t *testing.T) {
	sb := newSandbox(t)
	m := script(t,
		do(agent.ToolWriteFile, map[string]string{"path": "out/report.md", "content": "# Report\n"},
			agent.ToolReadFile, map[string]string{"path": "../../etc/passwd"},
			agent.ToolShell, map[string]any{"command": "sleep 5", "timeout_s": 1}),
		func(t *testing.T, req *model.Request) *model.Response {
			msgs := req.Messages[len(req.Messages)-3:]
			if msgs[0].IsError || !strings.Contains(msgs[0].Content, "wrote 9 bytes") {
				t.Errorf("approved write: %+v", msgs[0])
			}
			if !msgs[1].IsError || !strings.Contains(msgs[1].Content, "leads out of the workspace") {
				t.Errorf("escape: %+v", msgs[1])
			}
			if !strings.Contains(msgs[2].Content, "reached the time limit of 1s") {
				t.Errorf("timeout: %+v", msgs[2])
			}
			return &model.Response{Message: model.Message{Content: "ok"}}
		},
	)
	a, _ := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Sandbox: sb, Approver: agent.ApproveAll{},
		Policy: policyRequire("write_*")})
	events := collect(t, a, agent.Task{ID: "t", Input: "x"})
	if b, _ := os.ReadFile(filepath.Join(sb.HostPath(), "out", "report.md")); string(b) != "# Report\n" {
		t.Errorf("file %q", b)
	}
	if d := payloads[agent.ApprovalDecided](events); len(d) != 1 || !d[0].Approved {
		t.Errorf("approval events %+v", d)
	}
}

// flakyPackages fails with EUNAVAILABLE a number of times before it works.
type flakyPackages struct {
	agent.PackageSource
	failures atomic.Int64
}

func (f *flakyPackages) Package(ctx context.Context, d string) (*pack.Package, error) {
	if f.failures.Add(-1) >= 0 {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "object store unreachable")
	}
	return f.PackageSource.Package(ctx, d)
}

func TestStorageAndMaterializationFailures(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	csv := loadSkill(t, pkgs, exampleDir("csv-inspector"), "a")
	notes := loadSkill(t, pkgs, exampleDir("release-notes"), "b")
	flaky := &flakyPackages{PackageSource: pkgs}
	flaky.failures.Store(2)
	sb := failingPlace{newSandbox(t)}
	m := script(t,
		do(agent.ActivateSkill, map[string]string{"skill_name": "csv-inspector"}),
		func(t *testing.T, req *model.Request) *model.Response {
			c := req.Messages[len(req.Messages)-1]
			if c.IsError || !strings.Contains(c.Content, "# CSV inspector") || !strings.Contains(c.Content, "could not be placed") {
				t.Errorf("degraded activation: %+v", c)
			}
			flaky.failures.Store(1 << 30)
			return calls(agent.ActivateSkill, map[string]string{"skill_name": "release-notes"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			c := req.Messages[len(req.Messages)-1]
			if !c.IsError || !strings.Contains(c.Content, "release-notes") || !strings.Contains(c.Content, "did not answer") {
				t.Errorf("unreachable storage: %+v", c)
			}
			return &model.Response{Message: model.Message{Content: "ok"}}
		},
	)
	a, _ := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Skills: []agent.Skill{csv, notes}, Packages: flaky,
		Sandbox: sb, StorageRetry: 300 * time.Millisecond})
	events := collect(t, a, agent.Task{ID: "t", Input: "x"})
	mat := payloads[agent.SkillMaterialized](events)
	if len(mat) != 1 || mat[0].Error != "disk full" {
		t.Errorf("materialization event %+v", mat)
	}
}

// failingPlace is a sandbox whose placements fail.
type failingPlace struct{ sandbox.Sandbox }

func (failingPlace) Place(context.Context, string, *pack.Package) error {
	return skilld.Errorf(skilld.EUNAVAILABLE, "disk full")
}

func TestNoSandbox(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	huge := bigSkill(t, pkgs, "huge", 5000)
	m := script(t,
		func(t *testing.T, req *model.Request) *model.Response {
			if names := toolNames(req); len(names) != 2 {
				t.Errorf("without a sandbox only activate_skill and read_tool_output: %v", names)
			}
			return calls(agent.ActivateSkill, map[string]string{"skill_name": "huge"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			c := req.Messages[len(req.Messages)-1].Content
			_, rest, ok := strings.Cut(c, `read_tool_output id "`)
			id, _, _ := strings.Cut(rest, `"`)
			if !ok || id == "" {
				t.Fatalf("summary without a sandbox should give an output id:\n%.500s", c)
			}
			return calls(agent.ToolReadToolOutput, map[string]any{"id": id, "limit": 100})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			if c := req.Messages[len(req.Messages)-1].Content; !strings.HasPrefix(c, "---\nname: huge") {
				t.Errorf("paging the stored SKILL.md: %.200s", c)
			}
			return &model.Response{Message: model.Message{Content: "ok"}}
		},
	)
	a, _ := agent.New(agent.Config{Model: m, Window: 10000, Tokenizer: runeCounter{}, Skills: []agent.Skill{huge}, Packages: pkgs})
	collect(t, a, agent.Task{ID: "t", Input: "x"})
}

// A summarized activation fits its cap too: a 150-file skill in an
// 8,000-token window (cap 800) is summarized within 800 tokens, with a
// shortened file list, or refused.
func TestSummaryFitsItsCap(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	files := []pack.File{{Path: "SKILL.md", Data: []byte("---\nname: many-files\ndescription: d\n---\n" + strings.Repeat("Step. ", 2000))}}
	for i := range 150 {
		files = append(files, pack.File{Path: fmt.Sprintf("references/chapter-%03d-with-a-long-name.md", i), Data: []byte("x")})
	}
	p, err := pack.New(files, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sk := skillFromPackage(t, pkgs, p, "id-many")
	var entry string
	m := script(t, do(agent.ActivateSkill, map[string]string{"skill_name": "many-files"}),
		func(t *testing.T, req *model.Request) *model.Response {
			entry = req.Messages[len(req.Messages)-1].Content
			return &model.Response{Message: model.Message{Content: "ok"}}
		})
	a, _ := agent.New(agent.Config{Model: m, Window: 8000, Tokenizer: runeCounter{}, Skills: []agent.Skill{sk}, Packages: pkgs, Sandbox: newSandbox(t)})
	events := collect(t, a, agent.Task{ID: "t", Input: "x"})
	act := payloads[agent.SkillActivated](events)
	if len(act) != 1 || !act[0].Summarized || act[0].Tokens > 800 {
		t.Fatalf("activation %+v", act)
	}
	if n := (runeCounter{}).Count(entry); n > 800 || !strings.Contains(entry, "more (list them with list_files)") {
		t.Errorf("entry of %d tokens:\n%.400s", n, entry)
	}
}

// When the install policy withholds every attached skill, the model and
// the event stream learn which and why, instead of meeting an unexplained
// unknown tool.
func TestEverySkillWithheld(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	sk := bigSkill(t, pkgs, "lint", 20)
	sk.Withheld = `install policy rule 1 (deny registry "acme")`
	m := script(t,
		func(t *testing.T, req *model.Request) *model.Response {
			if !strings.Contains(req.System, "withholds every skill") || !strings.Contains(req.System, `- lint: withheld by install policy rule 1 (deny registry "acme")`) {
				t.Errorf("system prompt:\n%s", req.System)
			}
			return calls(agent.ActivateSkill, map[string]string{"skill_name": "lint"})
		},
		func(t *testing.T, req *model.Request) *model.Response {
			if c := req.Messages[len(req.Messages)-1].Content; !strings.Contains(c, "Unknown tool: activate_skill") || !strings.Contains(c, `deny registry "acme"`) {
				t.Errorf("activation: %q", c)
			}
			return &model.Response{Message: model.Message{Content: "ok"}}
		})
	a, _ := agent.New(agent.Config{Model: m, Window: 100000, Tokenizer: runeCounter{}, Skills: []agent.Skill{sk}, Packages: pkgs})
	collect(t, a, agent.Task{ID: "t", Input: "x"})
}

// TestCatalogShortenedNamesSkills: the catalog.trimmed event names the
// skills whose entry lost something at its level, and only those: a short
// description without files keeps its whole entry until names only.
func TestCatalogShortenedNamesSkills(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	p, _ := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("x")}}, pack.Limits{})
	digest := pkgs.Add(p)
	skills := []agent.Skill{
		{ID: "1", Name: "terse", Description: "Short. Use when asked.", Digest: digest, Files: []string{"SKILL.md"}},
		{ID: "2", Name: "wordy", Description: strings.Repeat("Explains at length. ", 20), Digest: digest, Files: []string{"SKILL.md"}},
		{ID: "3", Name: "filed", Description: "Has files. Use when filing.", Digest: digest, Files: []string{"SKILL.md", "a.sh", "b.sh"}},
	}
	size := func(level int) int { return runeCounter{}.Count(agent.CatalogText(skills, level)) }
	for _, tt := range []struct {
		window int
		level  string
		want   string
	}{
		{(size(0) - 1) * 50, "no file lists", "filed"},
		{(size(1) - 1) * 50, "descriptions shortened to 200 characters", "wordy filed"},
		{(size(3) - 1) * 50, "names only", "terse wordy filed"},
	} {
		m := script(t, func(t *testing.T, req *model.Request) *model.Response {
			return &model.Response{Message: model.Message{Content: "ok"}}
		})
		a, _ := agent.New(agent.Config{Model: m, Window: tt.window, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs})
		short := payloads[agent.CatalogShortened](collect(t, a, agent.Task{ID: "t", Input: "x"}))
		if len(short) != 1 || short[0].Level != tt.level || strings.Join(short[0].Skills, " ") != tt.want {
			t.Errorf("window %d: %+v, want %s naming %q", tt.window, short, tt.level, tt.want)
		}
	}
}

// TestOlderCatalogShortenedLog: a log written when the event was called
// catalog.shortened still resumes (the entry replays as catalog.trimmed)
// and reads back as the same payload, written with its current name.
func TestOlderCatalogShortenedLog(t *testing.T) {
	pkgs := &agent.MemoryPackages{}
	p, _ := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("x")}}, pack.Limits{})
	digest := pkgs.Add(p)
	skills := []agent.Skill{{ID: "1", Name: "filed", Description: "Has files. Use when filing.", Digest: digest, Files: []string{"SKILL.md", "a.sh", "b.sh"}}}
	window := (runeCounter{}.Count(agent.CatalogText(skills, 0)) - 1) * 50
	log := &agent.MemoryLog{}
	m := script(t, func(*testing.T, *model.Request) *model.Response {
		return &model.Response{Message: model.Message{Content: "ok"}}
	})
	a, _ := agent.New(agent.Config{Model: m, Window: window, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs, Log: log})
	collect(t, a, agent.Task{ID: "t", Input: "x"})
	all := log.Entries()
	renamed := 0
	for i, e := range all {
		if old := strings.Replace(string(e.Payload), `"type":"catalog.trimmed"`, `"type":"catalog.shortened"`, 1); old != string(e.Payload) {
			all[i].Payload, renamed = json.RawMessage(old), renamed+1
			var ev agent.Event
			if err := json.Unmarshal(all[i].Payload, &ev); err != nil {
				t.Fatal(err)
			}
			if c, ok := ev.Payload.(agent.CatalogShortened); !ok || c.Level != "no file lists" {
				t.Errorf("an older entry read back as %T %+v", ev.Payload, ev.Payload)
			}
			if b, _ := json.Marshal(ev); !strings.Contains(string(b), `"type":"catalog.trimmed"`) {
				t.Errorf("written again as %s", b)
			}
		}
	}
	if renamed != 1 {
		t.Fatalf("%d catalog events in the log", renamed)
	}
	// Resume before the answer: the catalog event is replayed, the model
	// asked again.
	cut := 0
	for i, e := range all {
		if e.Kind == agent.KindMessage && strings.Contains(string(e.Payload), `"role":"assistant"`) {
			cut = i
			break
		}
	}
	again := model.NewScripted(model.Reply("ok"))
	b, _ := agent.New(agent.Config{Model: again, Window: window, Tokenizer: runeCounter{}, Skills: skills, Packages: pkgs, Log: agent.NewMemoryLog(all[:cut])})
	ev := collect(t, b, agent.Task{ID: "t", Input: "x", Resume: all[:cut]})
	if len(ofType(ev, agent.EventTaskCompleted)) != 1 || len(ofType(ev, agent.EventTaskFailed)) != 0 {
		t.Errorf("the older log did not resume: %v", types(ev))
	}
}
