package agent

import (
	"context"
	"fmt"
	"iter"
	"os"
	"strings"
	"testing"

	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/sandbox/deps"
	"github.com/skilld/skilld/sandbox/unsafehost"
)

type nopModel struct{}

func (nopModel) Generate(context.Context, *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(func(*model.Chunk, error) bool) {}
}

type quarterCounter struct{}

func (quarterCounter) Count(s string) int { return (len(s) + 3) / 4 }

// benchRun builds a run with n skills and a transcript of msgs messages,
// as it stands in the middle of a long task.
func benchRun(b *testing.B, counter Counter, n, msgs int) *run {
	pkgs := &MemoryPackages{}
	var skills []Skill
	for i := range n {
		p, _ := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte(fmt.Sprint("skill ", i))}}, pack.Limits{})
		skills = append(skills, Skill{ID: fmt.Sprint(i), Name: fmt.Sprintf("skill-%03d", i),
			Description: "Summarize a CSV file before working with it: rows, columns, empty cells and a sample.", Digest: pkgs.Add(p), Files: []string{"SKILL.md", "scripts/run.sh"}})
	}
	cfg, err := Config{Model: nopModel{}, Window: 1_000_000, Tokenizer: counter, Skills: skills, Packages: pkgs, Sandbox: benchSandbox(b)}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	r := newRun(cfg, Task{ID: "bench"}, func(Event, error) bool { return true })
	r.disclosed = skills
	for _, s := range skills {
		r.byName[s.Name] = s
	}
	builtins, _ := r.builtinTools()
	r.planCatalog()
	r.tools = append([]*tool.Tool{r.activateTool()}, builtins...)
	r.prepare(context.Background())
	for i := range msgs {
		m := model.Message{Role: model.RoleUser, Content: strings.Repeat("Some words of a conversation. ", 10)}
		if i%2 == 1 {
			m = model.Message{Role: model.RoleAssistant, Content: "I will look at it.", ToolCalls: []model.ToolCall{{ID: fmt.Sprint(i), Name: "shell", Arguments: []byte(`{"command":"ls -la"}`)}}}
		}
		r.addMessage(context.Background(), m, "")
	}
	return r
}

// BenchmarkRequestOverhead measures what the runtime does around one model
// call, with 100 skills attached and a 200-message transcript: building
// the request, recording the call's two events and appending the model's
// answer to the transcript and the log.
func BenchmarkRequestOverhead(b *testing.B) {
	o200k, err := tokenizer.ForModel("openai:gpt-4o", "")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name    string
		counter Counter
	}{{"o200k_base", o200k}, {"quarter-counter", quarterCounter{}}} {
		b.Run(bc.name, func(b *testing.B) {
			r := benchRun(b, bc.counter, 100, 200)
			ctx := context.Background()
			answer := model.Message{Role: model.RoleAssistant, Content: "Here is what I found in the file: three rows and two columns."}
			saved := *r.view
			b.ReportAllocs()
			for b.Loop() {
				req, est := r.request()
				r.emit(ctx, LLMCallStarted{Iteration: 1, Messages: len(req.Messages), Tools: len(req.Tools), EstimatedTokens: est})
				r.emit(ctx, LLMCallCompleted{Iteration: 1, Usage: model.Usage{PromptTokens: est, CompletionTokens: 20}, StopReason: "end"})
				*r.view = saved
				r.addMessage(ctx, answer, "")
			}
		})
	}
}

// activationPackage is a 200-file, 5 MiB skill.
func activationPackage(b *testing.B) *pack.Package {
	files := []pack.File{{Path: "SKILL.md", Data: []byte("---\nname: big-skill\ndescription: A big package.\n---\n# Big\n\n" + strings.Repeat("Step by step instructions. ", 200))}}
	chunk := strings.Repeat("0123456789abcdef", (5<<20)/199/16)
	for i := range 199 {
		files = append(files, pack.File{Path: fmt.Sprintf("data/part-%03d.txt", i), Data: []byte(chunk)})
	}
	p, err := pack.New(files, pack.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkActivate5MB measures activation of a 200-file, 5 MiB skill in
// a fresh sandbox: reading the package, counting SKILL.md and placing the
// files. "bwrap" is the default provider with the package already in the
// skill cache (a later task of the same package: the placement is a
// read-only mount, nothing is written); "unsafe-host" writes the task's own
// copy every time.
func BenchmarkActivate5MB(b *testing.B) {
	pkg := activationPackage(b)
	pkgs := &MemoryPackages{}
	skill := Skill{ID: "big", Name: "big-skill", Description: "d", Digest: pkgs.Add(pkg)}
	dir := b.TempDir()
	providers := map[string]func() (sandbox.Provider, error){
		"bwrap": func() (sandbox.Provider, error) {
			return bwrap.New(context.Background(), bwrap.Config{Root: dir + "/bwrap", CacheDir: dir + "/cache"})
		},
		"unsafe-host": func() (sandbox.Provider, error) { return unsafehost.New(unsafehost.Config{Root: dir + "/host"}) },
	}
	for _, name := range []string{"bwrap", "unsafe-host"} {
		b.Run(name, func(b *testing.B) {
			p, err := providers[name]()
			if err != nil {
				b.Skip(err)
			}
			ctx := context.Background()
			cfg, _ := Config{Model: nopModel{}, Window: 1_000_000, Tokenizer: quarterCounter{}, Skills: []Skill{skill}, Packages: pkgs}.withDefaults()
			warm, err := p.Create(ctx, sandbox.CreateParams{ID: fmt.Sprint("warm-", b.N)})
			if err != nil {
				b.Fatal(err)
			}
			defer warm.Destroy(ctx)
			warm.Place(ctx, "skills/warm", pkg) // the first task fills the cache
			b.SetBytes(pkg.Size())
			for i := 0; i < b.N; i++ {
				activateIn(b, p, cfg, skill, fmt.Sprint("t", i))
			}
		})
	}
}

// activateIn activates skill in a new sandbox of p, timing only the
// activation, and fails on a note that it was not placed or not prepared.
func activateIn(b *testing.B, p sandbox.Provider, cfg Config, skill Skill, id string) {
	b.StopTimer()
	ctx := context.Background()
	sb, err := p.Create(ctx, sandbox.CreateParams{ID: id})
	if err != nil {
		b.Fatal(err)
	}
	cfg.Sandbox = sb
	r := newRun(cfg, Task{}, func(Event, error) bool { return true })
	r.byName[skill.Name] = skill
	b.StartTimer()
	out, err := r.activate(ctx, skill.Name)
	if err != nil || !strings.HasPrefix(out, "<skill_content") || strings.Contains(out, "could not be") {
		b.Fatalf("%v %.300s", err, out)
	}
	b.StopTimer()
	sb.Destroy(ctx)
	b.StartTimer()
}

// benchSandbox is a sandbox that needs nothing installed.
func benchSandbox(b *testing.B) sandbox.Sandbox {
	p, err := unsafehost.New(unsafehost.Config{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	sb, err := p.Create(context.Background(), sandbox.CreateParams{ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return sb
}

// summaryModel answers every call with a short summary.
type summaryModel struct{}

func (summaryModel) Generate(context.Context, *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		yield(&model.Chunk{Response: &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "Summary: the work so far, in two sentences."}}}, nil)
	}
}

// BenchmarkRequestLongTask measures building one request (windowing,
// compaction when due, the system prompt, the tools) deep into a task
// whose log holds 10,000 messages, with 100 skills attached and five
// activated: the cost follows what the request holds, not the log.
func BenchmarkRequestLongTask(b *testing.B) {
	for _, bc := range []struct {
		name        string
		placement   string
		maxMessages int
	}{
		{"transcript-compaction", PlacementTranscript, 0},
		{"transcript-window-60-compaction", PlacementTranscript, 60},
		{"context-window-60-compaction", PlacementContext, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			r := benchRun(b, quarterCounter{}, 100, 0)
			r.cfg.Model, r.cfg.Window, r.cfg.Placement, r.cfg.MaxMessages = summaryModel{}, 32000, bc.placement, bc.maxMessages
			if bc.placement == PlacementContext {
				r.cfg.MaxMessages = DefaultMaxMessages
				r.res = newResidency(r)
				r.view.pin = r.res.pins()
			}
			for i := range 5 {
				if _, err := r.activate(ctx, fmt.Sprintf("skill-%03d", i)); err != nil {
					b.Fatal(err)
				}
			}
			turn := func(i int) {
				id := fmt.Sprint("c", i)
				r.addMessage(ctx, model.Message{Role: model.RoleAssistant, Content: "Next step.", ToolCalls: []model.ToolCall{{ID: id, Name: "shell", Arguments: []byte(`{"command":"ls -la"}`)}}}, "")
				r.addMessage(ctx, model.Message{Role: model.RoleTool, ToolCallID: id, ToolName: "shell", Content: strings.Repeat("output line\n", 20)}, "")
				if _, _, err := r.fit(ctx); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 5000 { // a log of 10,000 messages
				turn(i)
			}
			b.ReportAllocs()
			i := 5000
			for b.Loop() {
				turn(i)
				i++
			}
			b.ReportMetric(float64(len(r.view.entries)), "view-messages")
		})
	}
}

// BenchmarkActivateDeps measures the first activation in a task of a
// document skill (a SKILL.md of 6 KiB and eleven scripts), with the skill
// cache warm: "plain" declares no dependencies; "cached" declares a
// requirements.txt whose layer an earlier task built, so activation also
// finds the layer, checks nothing new, binds it and writes its two
// skill.environment events.
func BenchmarkActivateDeps(b *testing.B) {
	bwraptest.Require(b)
	if os.Geteuid() != 0 {
		b.Skip("installs take the network through the proxy, which takes root")
	}
	ix := bwraptest.NewPackageIndex(b)
	files := []pack.File{{Path: "SKILL.md", Data: []byte("---\nname: doc\ndescription: Work with documents.\n---\n# Documents\n\n" + strings.Repeat("Step by step instructions. ", 230))}}
	for i := range 11 {
		files = append(files, pack.File{Path: fmt.Sprintf("scripts/step_%02d.py", i), Data: []byte("import probe_pkg\n" + strings.Repeat("# a line of the script\n", 130))})
	}
	plain, _ := pack.New(files, pack.Limits{})
	withDeps, _ := pack.New(append(files, pack.File{Path: "requirements.txt", Data: []byte("probe-pkg==1.0\n")}), pack.Limits{})
	dir := b.TempDir()
	p, err := bwrap.New(b.Context(), bwrap.Config{Root: dir + "/bwrap", CacheDir: dir + "/cache", Deps: bwrap.DepsConfig{Indexes: deps.Indexes{Python: ix.URL + "/simple"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, bc := range []struct {
		name string
		pkg  *pack.Package
	}{{"plain", plain}, {"cached", withDeps}} {
		b.Run(bc.name, func(b *testing.B) {
			pkgs := &MemoryPackages{}
			skill := Skill{ID: "doc1", Name: "doc", Description: "d", Digest: pkgs.Add(bc.pkg)}
			cfg, _ := Config{Model: nopModel{}, Window: 1_000_000, Tokenizer: quarterCounter{}, Skills: []Skill{skill}, Packages: pkgs}.withDefaults()
			activateIn(b, p, cfg, skill, "warm") // fills the skill cache and builds the layer
			for i := 0; b.Loop(); i++ {
				activateIn(b, p, cfg, skill, fmt.Sprint("t", i))
			}
		})
	}
}
