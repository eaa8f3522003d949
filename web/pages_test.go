package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/web"
)

// fixture fills workspace team with a skill of two versions (one binary
// file), a catalog item, an agent and a task.
type fixture struct {
	skill *service.SkillView
	agent *skilld.Agent
	task  *skilld.Task
}

func (e *env) fixture() fixture {
	t := e.t
	sk := e.skill(e.member, map[string]string{
		"SKILL.md":       skillMD("report", "Writes reports.", "# Report\n\nRun `scripts/run.py`.\n"),
		"scripts/run.py": "print('hello')\n",
		"logo.bin":       "\x00\x01\x02binary",
	})
	if _, err := e.svc.ReplaceSkillFilesFromArchive(t.Context(), e.member, service.ReplaceSkillFilesFromArchiveParams{SkillRef: service.SkillRef{ID: sk.ID},
		Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("report", "Writes reports.", "# Report\n\nRun it twice.\n"), "scripts/run.py": "print('hello, world')\n", "logo.bin": "\x00\x01\x02binary"}),
		Message: "second"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.CreateRegistry(t.Context(), e.root, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustCommunity}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.PublishCatalogItem(t.Context(), e.root, service.PublishCatalogItemParams{Registry: "acme",
		Archive: zipOf(t, map[string]string{"SKILL.md": skillMD("lint", "Lints code.", "Lint.\n")})}); err != nil {
		t.Fatal(err)
	}
	ag, err := e.svc.CreateAgent(t.Context(), e.member, service.AgentParams{Name: "writer", Config: skilld.AgentConfig{Model: "openai:gpt-4o"},
		Skills: []service.AgentSkillRef{{Skill: sk.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := e.svc.RunTask(t.Context(), e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "write one"})
	if err != nil {
		t.Fatal(err)
	}
	sv, _ := e.svc.GetSkill(t.Context(), e.member, service.GetSkillParams{SkillRef: service.SkillRef{ID: sk.ID}})
	return fixture{skill: sv, agent: ag, task: task}
}

func (f fixture) pages() []string {
	id := f.skill.ID
	return []string{
		"/ui/skills", "/ui/skills?q=rep", "/ui/skills/" + id, "/ui/skills/" + id + "/files/scripts/run.py?version=2",
		"/ui/skills/" + id + "/files/logo.bin?version=1", "/ui/skills/" + id + "/diff?from=1&to=2", "/ui/skills/" + id + "/edit",
		"/ui/catalog", "/ui/agents", "/ui/agents/new", "/ui/agents/" + f.agent.ID, "/ui/tasks", "/ui/tasks/" + f.task.ID,
	}
}

var inlineCode = regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|<script>|<style|\sstyle=|\son[a-z]+=`)

// TestEveryPage checks the headers, size and absence of inline script or
// style on every page, signed in and out.
func TestEveryPage(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	b := e.signedIn(e.memberTok)
	check := func(path string, p page) {
		t.Helper()
		h := p.header
		if got := h.Get("Content-Security-Policy"); got != web.ContentSecurityPolicy {
			t.Errorf("%s: CSP %q", path, got)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: nosniff %q, referrer %q", path, h.Get("X-Content-Type-Options"), h.Get("Referrer-Policy"))
		}
		if len(p.body) >= 100_000 {
			t.Errorf("%s: %d bytes, want under 100 KB", path, len(p.body))
		}
		if m := inlineCode.FindString(p.body); m != "" {
			t.Errorf("%s: inline script or style %q", path, m)
		}
	}
	for _, path := range f.pages() {
		p := b.get(path)
		if p.status != http.StatusOK {
			t.Errorf("%s: %d\n%s", path, p.status, p.body)
		}
		check(path, p)
	}
	for _, path := range []string{"/ui/login", "/ui/nowhere", "/ui/skills/nope", "/ui/static/app.css", "/ui/static/task.js", "/ui/static/chroma.css"} {
		check(path, b.get(path))
	}
	check("/ui/login (signed out)", e.browser().get("/ui/login"))
	if p := b.get("/ui/nowhere"); p.status != http.StatusNotFound {
		t.Errorf("/ui/nowhere: %d", p.status)
	}
}

func TestSkillPages(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	b := e.signedIn(e.memberTok)
	id := f.skill.ID

	list := b.get("/ui/skills?q=report")
	if !strings.Contains(element(t, list, "skills"), `class="skill" href="/ui/skills/`+id+`">report</a>`) {
		t.Errorf("#skills lacks the skill link:\n%s", list.body)
	}
	sp := b.get("/ui/skills/" + id)
	for _, want := range []string{`id="skill-md"`, "<h1>Report</h1>", `id="warnings"`, `id="files"`, `href="/ui/skills/` + id + `/files/scripts/run.py?version=2"`,
		`id="versions"`, `id="diff-form"`, `name="from"`, `name="to"`, `id="edit"`, f.skill.Digest[len("sha256:"):][:12]} {
		if !strings.Contains(sp.body, want) {
			t.Errorf("skill page lacks %q", want)
		}
	}
	fp := b.get("/ui/skills/" + id + "/files/scripts/run.py?version=1")
	if c := element(t, fp, "file-content"); !strings.Contains(c, `class="chroma"`) || !strings.Contains(c, "hello") || strings.Contains(c, "world") {
		t.Errorf("file page: want version 1 highlighted with classes:\n%s", c)
	}
	bp := b.get("/ui/skills/" + id + "/files/logo.bin")
	dl := element(t, bp, "download")
	href := regexp.MustCompile(`href="([^"]+)"`).FindStringSubmatch(dl)[1]
	raw := b.get(strings.ReplaceAll(href, "&amp;", "&"))
	if raw.status != 200 || raw.body != "\x00\x01\x02binary" || !strings.HasPrefix(raw.header.Get("Content-Disposition"), "attachment") {
		t.Errorf("download: %d %q %q", raw.status, raw.body, raw.header.Get("Content-Disposition"))
	}
	dp := b.get("/ui/skills/" + id + "/diff?from=1&to=2")
	d := element(t, dp, "diff")
	for _, want := range []string{"-print(&#39;hello&#39;)", "&#43;print(&#39;hello, world&#39;)", "&#43;Run it twice."} {
		if !strings.Contains(d, want) {
			t.Errorf("#diff lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "logo.bin") {
		t.Errorf("#diff lists an unchanged file")
	}

	// The editor saves a new version, keeping the binary file.
	ep := b.get("/ui/skills/" + id + "/edit")
	if !strings.Contains(ep.body, `name="file:SKILL.md"`) || !strings.Contains(ep.body, `name="file:scripts/run.py"`) {
		t.Fatalf("editor lacks the text files' textareas")
	}
	p := b.post("/ui/skills/"+id+"/edit", url.Values{"csrf": {csrfOf(t, ep)}, "version": {"2"},
		"file:SKILL.md":       {skillMD("report", "Writes better reports.", "# Report\r\n\r\nEdited.\r\n")},
		"file:scripts/run.py": {"print('hello, world')\n"}, "new_path": {"notes.txt"}, "new_content": {"a note"}, "message": {"edited in the UI"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/skills/"+id {
		t.Fatalf("edit: %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	files, err := e.svc.ListSkillFiles(t.Context(), e.member, service.ListSkillFilesParams{SkillRef: service.SkillRef{ID: id}})
	if err != nil || files.Version != 3 || len(files.Files) != 4 {
		t.Fatalf("after the edit: %+v, %v; want version 3 with 4 files", files, err)
	}
	c, _ := e.svc.GetSkillContent(t.Context(), e.member, service.GetSkillContentParams{SkillRef: service.SkillRef{ID: id}})
	if strings.Contains(c.Content, "\r") || !strings.Contains(c.Content, "Edited.") {
		t.Errorf("saved SKILL.md %q", c.Content)
	}
	// A stale editor is a conflict, shown on the editor.
	p = b.post("/ui/skills/"+id+"/edit", url.Values{"csrf": {csrfOf(t, ep)}, "version": {"2"}, "file:SKILL.md": {skillMD("report", "x", "y")}})
	if p.status != http.StatusConflict || !strings.Contains(p.body, `id="error"`) {
		t.Errorf("stale edit: %d", p.status)
	}
}

func TestUpload(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn(e.memberTok)
	csrf := b.csrf()
	p := b.upload("/ui/skills/upload", url.Values{"csrf": {csrf}}, "archive", "s.zip", zipOf(t, map[string]string{"SKILL.md": skillMD("uploaded", "Up.", "Hi.\n")}))
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/ui/skills/") {
		t.Fatalf("upload: %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	if sp := b.get(p.header.Get("Location")); !strings.Contains(sp.body, "uploaded") {
		t.Errorf("the new skill's page does not name it")
	}
	p = b.upload("/ui/skills/upload", url.Values{"csrf": {csrf}}, "archive", "bad.zip", []byte("not an archive"))
	if p.status != http.StatusUnprocessableEntity || errorText(t, p) == "" {
		t.Errorf("bad archive: %d", p.status)
	}
	// GitHub is not configured in this environment: the service says so.
	p = b.post("/ui/skills/import", url.Values{"csrf": {csrf}, "github_url": {"https://github.com/o/r"}})
	if p.status != http.StatusServiceUnavailable || !strings.Contains(errorText(t, p), "GitHub imports are not configured") {
		t.Errorf("import: %d %s", p.status, p.body)
	}
}

func TestSafeMarkdown(t *testing.T) {
	e := newEnv(t)
	body := "# Title\n\n<script>alert(1)</script>\n\n<div onclick=\"alert(2)\">raw</div>\n\n" +
		"[bad](javascript:alert(3)) [bad2](JaVaScRiPt:alert(4)) [bad3](java\tscript:alert(5)) <javascript:alert(6)>\n\n" +
		"[good](https://example.com/x) and ![img](javascript:alert(7))\n\ninline <b onmouseover=alert(8)>bold</b>\n\n[own file](scripts/x.sh#top)\n"
	sk := e.skill(e.member, map[string]string{"SKILL.md": skillMD("unsafe", "Tries things.", body)})
	p := e.signedIn(e.viewerTok).get("/ui/skills/" + sk.ID)
	md := element(t, p, "skill-md")
	md = md[:strings.Index(md, "</article>")]
	for _, bad := range []string{"<script", "onclick", "onmouseover", "<div", "<b ", "alert(3)", "alert(4)", "alert(6)", "alert(7)"} {
		if strings.Contains(strings.ToLower(md), strings.ToLower(bad)) {
			t.Errorf("rendered SKILL.md contains %q:\n%s", bad, md)
		}
	}
	if m := regexp.MustCompile(`(?i)(href|src)="[^"]*script:`).FindString(md); m != "" {
		t.Errorf("rendered SKILL.md links to a script URL: %s\n%s", m, md)
	}
	if !strings.Contains(md, `<a href="https://example.com/x" rel="noopener noreferrer">good</a>`) {
		t.Errorf("safe link missing or without rel:\n%s", md)
	}
	if want := `<a href="/ui/skills/` + sk.ID + `/files/scripts/x.sh?version=1#top" rel="noopener noreferrer">own file</a>`; !strings.Contains(md, want) {
		t.Errorf("a relative link does not open the skill's file:\n%s", md)
	}
	if !strings.Contains(md, "bad") || !strings.Contains(md, "<h1>Title</h1>") {
		t.Errorf("text of dropped links or the heading is gone:\n%s", md)
	}
}

func TestCatalogInstall(t *testing.T) {
	e := newEnv(t)
	e.fixture()
	b := e.signedIn(e.memberTok)
	cp := b.get("/ui/catalog")
	items := element(t, cp, "items")
	if !strings.Contains(items, "acme/lint") || !strings.Contains(items, `class="verdict ok"`) || !strings.Contains(items, `class="install inline"`) ||
		!strings.Contains(items, `name="item" value="acme/lint"`) {
		t.Fatalf("#items:\n%s", items)
	}
	p := b.post("/ui/catalog/install", url.Values{"csrf": {csrfOf(t, cp)}, "item": {"acme/lint"}})
	if p.status != http.StatusOK || !strings.Contains(element(t, p, "result"), "Installed") {
		t.Fatalf("install: %d\n%s", p.status, p.body)
	}
	// A deny rule shows as the verdict before install, and refuses it.
	if _, err := e.svc.PutPolicy(t.Context(), e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, Registry: "acme"}}}); err != nil {
		t.Fatal(err)
	}
	cp = b.get("/ui/catalog")
	if v := element(t, cp, "items"); !strings.Contains(v, `class="verdict no"`) || !strings.Contains(v, "refused by install policy rule 1") {
		t.Fatalf("verdict after a deny rule:\n%s", v)
	}
	p = b.post("/ui/catalog/install", url.Values{"csrf": {csrfOf(t, cp)}, "item": {"acme/lint"}})
	if p.status != http.StatusForbidden || !strings.Contains(errorText(t, p), "refuses") {
		t.Fatalf("install refused by policy: %d\n%s", p.status, p.body)
	}
}

func TestAgentEditor(t *testing.T) {
	e := newEnv(t)
	f := e.fixture()
	b := e.signedIn(e.memberTok)
	np := b.get("/ui/agents/new")
	form := element(t, np, "agent-form")
	for _, name := range []string{"name", "instruction", "model", "context_window", "placement", "max_loaded", "skills", "tools_denied", "tools_require_approval"} {
		if !strings.Contains(form, `name="`+name+`"`) || !strings.Contains(form, `<label for="`+name+`"`) {
			t.Errorf("agent form lacks %s or its label", name)
		}
	}
	p := b.post("/ui/agents/new", url.Values{"csrf": {csrfOf(t, np)}, "name": {"helper"}, "instruction": {"Be brief."}, "model": {"openai:gpt-4o"},
		"context_window": {"32000"}, "placement": {"context"}, "max_loaded": {"2"}, "skills": {f.skill.ID},
		"tools_denied": {"shell, fs_*"}, "tools_require_approval": {"http_*"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", p.status, p.body)
	}
	a, err := e.svc.GetAgent(t.Context(), e.member, service.GetAgentParams{AgentRef: service.AgentRef{ID: "helper"}})
	if err != nil {
		t.Fatal(err)
	}
	c := a.Config
	if c.Instruction != "Be brief." || c.Context.Window != 32000 || c.Context.Placement != "context" || c.Context.MaxLoaded != 2 ||
		strings.Join(c.Tools.Denied, ",") != "shell,fs_*" || strings.Join(c.Tools.RequireApproval, ",") != "http_*" || len(a.Skills) != 1 {
		t.Fatalf("created agent %+v", a)
	}
	// Editing keeps what the form does not show and clears what it empties.
	ep := b.get("/ui/agents/" + a.ID)
	// The page says how the catalog fits, the agent's own window marked.
	if fit := element(t, ep, "catalog-fit"); !strings.Contains(fit, "Skills listed to the model: 1,") ||
		!strings.Contains(fit, `<tr class="agent-window"><td>32k (this agent)</td><td>full</td>`) {
		t.Errorf("catalog fit section:\n%s", fit)
	}
	p = b.post("/ui/agents/"+a.ID, url.Values{"csrf": {csrfOf(t, ep)}, "name": {"helper"}, "model": {"openai:gpt-4o"}, "tools_denied": {"shell"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("update: %d\n%s", p.status, p.body)
	}
	a, _ = e.svc.GetAgent(t.Context(), e.member, service.GetAgentParams{AgentRef: service.AgentRef{ID: a.ID}})
	if a.Config.Instruction != "" || a.Config.Context.Window != 0 || len(a.Skills) != 0 || strings.Join(a.Config.Tools.Denied, ",") != "shell" {
		t.Fatalf("updated agent %+v", a)
	}
	if list := b.get("/ui/agents"); !strings.Contains(element(t, list, "agents"), "helper") {
		t.Errorf("#agents lacks the agent")
	}
	p = b.post("/ui/agents/new", url.Values{"csrf": {csrfOf(t, np)}, "name": {"bad"}, "context_window": {"lots"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(errorText(t, p), "context_window") {
		t.Errorf("bad number: %d", p.status)
	}
}

// TestBigFiles: a large file and a large diff are cut to keep their
// pages under 100 KB, even of text that markup multiplies.
func TestBigFiles(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("<&\"\n", 60_000)
	sk := e.skill(e.member, map[string]string{"SKILL.md": skillMD("big", "Big.", "x\n"), "big.txt": big, "big.go": strings.Repeat("a := \"<b>\" // x\n", 20_000)})
	if _, err := e.svc.ReplaceSkillFiles(t.Context(), e.member, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID},
		Files: map[string]string{"SKILL.md": skillMD("big", "Big.", "x\n"), "big.txt": strings.Repeat("x\n", 60_000), "big.go": "package big\n"}}); err != nil {
		t.Fatal(err)
	}
	b := e.signedIn(e.memberTok)
	for _, path := range []string{"/ui/skills/" + sk.ID + "/files/big.txt?version=1", "/ui/skills/" + sk.ID + "/files/big.go?version=1",
		"/ui/skills/" + sk.ID + "/diff?from=1&to=2", "/ui/skills/" + sk.ID} {
		p := b.get(path)
		if p.status != 200 || len(p.body) >= 100_000 {
			t.Errorf("%s: %d, %d bytes", path, p.status, len(p.body))
		}
		if strings.Contains(path, "?") && !strings.Contains(p.body, `class="hint"`) {
			t.Errorf("%s does not say it was cut", path)
		}
	}
}
