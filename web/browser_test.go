package web_test

// Real-browser tests of the web UI: a real `skilld serve` (built from
// ./cmd/skilld) on a fresh data folder, driven by headless Chromium through
// chromedp. Every step waits on elements of the page, never for a fixed
// time; every step leaves a PNG screenshot in $SKILLD_TEST_ARTIFACTS (or
// in a temporary folder, named in the log).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/skilld/skilld/importer/githubtest"
)

// TestBrowser runs the UI's scenarios in a real browser against a real
// server, in order: an admin's tour of every page, then a viewer and a
// token of another workspace, whom the same pages refuse.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and a browser; skipped in -short mode")
	}
	requireChromeTool(t, "bubblewrap (tasks run their tools in it)", "bwrap")
	shots := chromeShots(t)
	browser := startChrome(t)
	// GitHub imports go to a fake GitHub (the importer's own test server).
	gh := githubtest.New(t)
	gh.AddRepo("acme", "skills", "main", githubtest.FilesOf(map[string]string{
		"skills/greeting/SKILL.md": "---\nname: greeting\ndescription: Greets people by name. Use when asked to say hello.\n---\n# Greeting\n\nSay hello, by name.\n",
	})...)
	gh.AddRepo("acme", "more", "main", githubtest.FilesOf(map[string]string{
		"farewell/SKILL.md": "---\nname: farewell\ndescription: Says goodbye. Use when a conversation ends.\n---\n# Farewell\n\nSay goodbye.\n",
		"welcome/SKILL.md":  "---\nname: welcome\ndescription: Welcomes newcomers. Use when someone joins.\n---\n# Welcome\n\nSay welcome.\n",
	})...)
	srv := startChromeServer(t, "--github-api-url", gh.API.URL)

	t.Run("Admin", func(t *testing.T) { chromeAdminScenario(t, srv, newChromeTab(t, browser, srv.url, shots, "admin")) })
	t.Run("Refusals", func(t *testing.T) {
		chromeRefusalScenario(t, srv, newChromeTab(t, browser, srv.url, shots, "refusals"))
	})
}

// chromeTaskScript is the absolute path of the scripted model's script of the
// admin's agent: it activates csv-inspector, writes a CSV file, runs the
// skill's script with the shell tool (which the agent's policy makes wait
// for an approval) and answers.
func chromeTaskScript(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "browser", "task-script.json"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// exampleSkill is the repository's example skills folder.
func exampleSkill(name string) string { return filepath.Join("..", "examples", "skills", name) }

// chromeStartTask starts a task of agent on the tasks page and returns the
// path of the task's page, where it leads.
func chromeStartTask(b *chromeTab, agent, input string) string {
	b.t.Helper()
	b.visit("/ui/tasks", "#start")
	b.fill("#start", map[string]any{"agent": agent, "input": input})
	if code := b.submit("#start"); code != http.StatusOK {
		b.fail("starting a task: %d", code)
	}
	p := b.path()
	if !regexp.MustCompile(`^/ui/tasks/[^/]+$`).MatchString(p) {
		b.fail("starting a task led to %s", p)
	}
	return p
}

// chromeAdminScenario: the instance admin signs in and tours the UI, from an
// upload to an approved tool call of a task.
func chromeAdminScenario(t *testing.T, srv *chromeServer, b *chromeTab) {
	var skillPage, taskPage string
	archive := filepath.Join(t.TempDir(), "csv-inspector.zip")
	if err := os.WriteFile(archive, chromeZipSkill(t, exampleSkill("csv-inspector")), 0o644); err != nil {
		t.Fatal(err)
	}
	runChromeSteps(t, b, []chromeStep{
		{"sign-in", func(t *testing.T) {
			// A page of the UI without a session leads to the login page.
			b.open("/ui/skills")
			if p := b.path(); p != "/ui/login" {
				b.fail("/ui/skills without a session is at %s, not the login page", p)
			}
			resp := chromeGet(b, "open the login page", chromedp.NavigateResponse(b.base+"/ui/login"))
			if csp, _ := resp.Headers["Content-Security-Policy"].(string); !strings.Contains(csp, "script-src 'self'") {
				b.fail("the login page's Content-Security-Policy is %q", csp)
			}
			// A wrong token is refused on the login page, saying so.
			b.wait("#login")
			b.do("type a wrong token", chromedp.SendKeys(chromedp.CSS(`#login input[name="token"]`), "skd_wrongwrongwrongwrongwrong0000"))
			b.submit("#login")
			b.wait("#error")
			if p := b.path(); p != "/ui/login" {
				b.fail("a wrong token led to %s", p)
			}
			b.shot("login-refused")

			b.signIn(chromeAdminToken)
			b.checkChrome("default", "admin")
		}},
		{"upload", func(t *testing.T) {
			b.wait("#upload")
			b.do("choose the archive", chromedp.SetUploadFiles(chromedp.CSS(`#upload input[name="archive"]`), []string{archive}))
			if code := b.submit("#upload"); code != http.StatusOK {
				b.fail("upload: %d", code)
			}
			skillPage = b.path()
			if !regexp.MustCompile(`^/ui/skills/[^/]+$`).MatchString(skillPage) {
				b.fail("the upload led to %s, not the new skill's page", skillPage)
			}
			b.waitText("#skill-md", "CSV inspector")
		}},
		{"list-and-search", func(t *testing.T) {
			b.visit("/ui/skills", "#skills")
			if got := b.text("#skills a.skill"); !strings.Contains(got, "csv-inspector") {
				b.fail("#skills lists %q, not csv-inspector", got)
			}
			b.fill("#search", map[string]any{"q": "summarize"})
			b.submit("#search")
			if b.count("#skills a.skill") != 1 {
				b.fail("searching for a word of its description does not find csv-inspector")
			}
			b.fill("#search", map[string]any{"q": "nosuchwordanywhere"})
			b.submit("#search")
			if n := b.count("#skills a.skill"); n != 0 {
				b.fail("a search for a missing word lists %d skills", n)
			}
			b.fill("#search", map[string]any{"q": ""})
			b.submit("#search")
		}},
		{"import", func(t *testing.T) {
			// One skill of a repository, by its tree URL: its page opens.
			b.visit("/ui/skills", "#import")
			b.fill("#import", map[string]any{"github_url": "https://github.com/acme/skills/tree/main/skills/greeting"})
			if code := b.submit("#import"); code != http.StatusOK {
				b.fail("import: %d", code)
			}
			if p := b.path(); !regexp.MustCompile(`^/ui/skills/[^/]+$`).MatchString(p) || p == skillPage {
				b.fail("the import led to %s, not the new skill's page", p)
			}
			b.waitText("#skill-md", "Say hello, by name.")
			b.waitText(".meta", "github")
			// Every skill of another repository at once: the list says what
			// was imported.
			b.visit("/ui/skills", "#import")
			b.fill("#import", map[string]any{"github_url": "https://github.com/acme/more", "import_all": true})
			if code := b.submit("#import"); code != http.StatusOK {
				b.fail("import of a repository: %d", code)
			}
			b.waitText("#main", "Imported")
			if got := b.text("#main section"); !strings.Contains(got, "farewell") || !strings.Contains(got, "welcome") {
				b.fail("the imported list is %q", got)
			}
			b.visit("/ui/skills", "#skills")
			if n := b.count("#skills a.skill"); n != 4 {
				b.fail("%d skills listed after the imports, want 4", n)
			}
		}},
		{"skill-page", func(t *testing.T) {
			if code := b.click(`#skills a.skill[href="` + skillPage + `"]`); code != http.StatusOK {
				b.fail("opening the skill: %d", code)
			}
			if p := b.path(); p != skillPage {
				b.fail("the list's link leads to %s, the upload to %s", p, skillPage)
			}
			// SKILL.md is rendered: its heading is a heading, not "# CSV inspector".
			if h := b.text("#skill-md h1"); !strings.Contains(h, "CSV inspector") {
				b.fail("#skill-md h1 is %q", h)
			}
			b.wait("#files")
			b.wait("#versions")
			b.wait("#diff-form")
			b.wait("#edit")
			if files := b.text("#files"); !strings.Contains(files, "scripts/csv-summary.sh") || !strings.Contains(files, "SKILL.md") {
				b.fail("#files is %q", files)
			}
		}},
		{"file-view", func(t *testing.T) {
			if code := b.click(`#files a[href*="csv-summary.sh"]`); code != http.StatusOK {
				b.fail("opening the script: %d", code)
			}
			b.waitText("#file-content", "awk")
			// Highlighted: the text is marked up, not one plain block.
			if n := b.count("#file-content span"); n == 0 {
				b.fail("#file-content has no highlighting markup")
			}
		}},
		{"binary-file-and-warnings", func(t *testing.T) {
			var odd struct{ ID string }
			srv.api(t, chromeAdminToken, "POST", "/v1/workspaces/default/skills/upload?lenient=true",
				zipOf(t, map[string]string{"SKILL.md": chromeHostileSkill, "assets/logo.png": string(chromePNG)}), http.StatusCreated, &odd)
			b.visit("/ui/skills/"+odd.ID, "#skill-md")
			if w := b.text("#warnings"); !strings.Contains(w, "colour") {
				b.fail("#warnings does not name the unknown key: %q", w)
			}
			// The Markdown's HTML and javascript: link are not live markup.
			if bad := b.count(`#skill-md script, #skill-md img, #skill-md [onerror], #skill-md [onmouseover], #skill-md a[href^="javascript:"]`); bad != 0 {
				b.fail("#skill-md holds %d live element(s) from the Markdown's HTML", bad)
			}
			b.do("hover the bold text", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("#skill-md b, #skill-md a").forEach(e => e.dispatchEvent(new MouseEvent("mouseover", {bubbles: true})))`))
			if pwned := chromeGet(b, "read window.pwned", chromedp.Evaluate[string](`String(window.pwned)`)); pwned != "undefined" {
				b.fail("the SKILL.md's script ran: window.pwned = %s", pwned)
			}
			b.shot("hostile-skill-md")
			if code := b.click(`#files a[href*="logo.png"]`); code != http.StatusOK {
				b.fail("opening the binary file: %d", code)
			}
			b.wait("#download")
			if b.count("#file-content") != 0 {
				b.fail("a binary file is shown as text")
			}
		}},
		{"edit", func(t *testing.T) {
			b.visit(skillPage, "#edit")
			if code := b.click("#edit"); code != http.StatusOK {
				b.fail("opening the editor: %d", code)
			}
			sel := `textarea[name="file:SKILL.md"]`
			b.wait(sel)
			md := chromeGet(b, "read SKILL.md", chromedp.Value(chromedp.CSS(sel)))
			if !strings.Contains(md, "name: csv-inspector") {
				b.fail("the editor's SKILL.md is %q", md)
			}
			b.do("edit SKILL.md", chromedp.SetValue(chromedp.CSS(sel), md+"\n## Edited in the browser\n\nThis line was added by the browser test.\n"))
			b.fill("form:has(textarea[name=\"file:SKILL.md\"])", map[string]any{"message": "A section from the browser"})
			if code := b.submit(`form:has(textarea[name="file:SKILL.md"])`); code != http.StatusOK {
				b.fail("saving the edit: %d", code)
			}
			if p := b.path(); p != skillPage {
				b.fail("saving led to %s, not the skill's page", p)
			}
			b.waitText("#skill-md", "Edited in the browser")
			if v := b.text("#versions"); !strings.Contains(v, "A section from the browser") {
				b.fail("#versions does not show the new version's message: %q", v)
			}
		}},
		{"diff", func(t *testing.T) {
			b.fill("#diff-form", map[string]any{"from": "1", "to": "2"})
			if code := b.submit("#diff-form"); code != http.StatusOK {
				b.fail("the diff: %d", code)
			}
			b.waitText("#diff", "This line was added by the browser test.")
		}},
		{"catalog-install", func(t *testing.T) {
			srv.api(t, chromeAdminToken, "POST", "/v1/catalog/registries", map[string]any{"name": "acme", "trust": "verified"}, http.StatusCreated, nil)
			srv.api(t, chromeAdminToken, "POST", "/v1/catalog/registries/acme/items", chromeZipSkill(t, exampleSkill("commit-message")), http.StatusCreated, nil)
			srv.api(t, chromeAdminToken, "POST", "/v1/catalog/registries", map[string]any{"name": "shady", "trust": "community"}, http.StatusCreated, nil)
			srv.api(t, chromeAdminToken, "POST", "/v1/catalog/registries/shady/items", chromeZipSkill(t, exampleSkill("release-notes")), http.StatusCreated, nil)
			srv.api(t, chromeAdminToken, "PUT", "/v1/workspaces/default/policy",
				map[string]any{"install_rules": []map[string]any{{"effect": "deny", "registry": "shady"}}}, http.StatusOK, nil)

			b.visit("/ui/catalog", "#items")
			items := b.text("#items")
			if !strings.Contains(items, "commit-message") || !strings.Contains(items, "release-notes") {
				b.fail("#items is %q", items)
			}
			// Each item says what the install policy decides for it.
			verdicts := chromeGet(b, "read the verdicts", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#items .verdict")].map(e => e.textContent)`))
			if len(verdicts) != 2 || !strings.Contains(strings.Join(verdicts, "|"), "refused") || !strings.Contains(strings.Join(verdicts, "|"), "allowed") {
				b.fail("the verdicts are %q, want one allowed and one refused", verdicts)
			}
			// The refused item's Install button is disabled, and what
			// describes it to a screen reader is the verdict naming the rule.
			refused := chromeGet(b, "read the refused item's button", chromedp.Evaluate[[]string](`(() => {
				const btn = document.querySelector('button[aria-label="Install shady/release-notes"]');
				const why = btn && document.getElementById(btn.getAttribute("aria-describedby"));
				return btn ? [String(btn.disabled), why ? why.textContent : ""] : [];
			})()`))
			if len(refused) != 2 || refused[0] != "true" || !strings.Contains(refused[1], `install policy rule 1 (deny registry "shady")`) {
				b.fail("the refused item's button (disabled, description): %q", refused)
			}
			b.shot("catalog-install-refused")
			form := `form.install:has(input[name="item"][value="acme/commit-message"])`
			if code := b.submit(form); code != http.StatusOK {
				b.fail("install: %d", code)
			}
			b.waitText("#result", "Installed")
			// The installed item is marked with its version, instead of a button.
			if items := b.text("#items"); !strings.Contains(items, "Installed: version 1") {
				b.fail("#items after the install is %q", items)
			}
			var sk struct {
				CatalogItem string `json:"catalog_item"`
			}
			srv.api(t, chromeAdminToken, "GET", "/v1/workspaces/default/skills/commit-message", nil, http.StatusOK, &sk)
			if sk.CatalogItem == "" {
				b.fail("commit-message is not installed from the catalog: %+v", sk)
			}
		}},
		{"agent", func(t *testing.T) {
			b.visit("/ui/agents/new", "#agent-form")
			b.fill("#agent-form", map[string]any{
				"name":                   "analyst",
				"instruction":            "Answer questions about CSV files.",
				"model":                  "scripted:" + chromeTaskScript(t),
				"context_window":         "32000",
				"skills":                 []string{"csv-inspector"},
				"tools_require_approval": "shell",
			})
			if code := b.submit("#agent-form"); code != http.StatusOK {
				b.fail("saving the agent: %d", code)
			}
			if p := b.path(); !strings.HasPrefix(p, "/ui/agents/") || p == "/ui/agents/new" {
				b.fail("saving the agent led to %s", p)
			}
			b.visit("/ui/agents", "#agents")
			if got := b.text("#agents a.agent"); got != "analyst" {
				b.fail("/ui/agents lists %q, not analyst", got)
			}
		}},
		{"task-waits-for-approval", func(t *testing.T) {
			taskPage = chromeStartTask(b, "analyst", "How many rows has orders.csv?")
			b.waitText("#events", "tool.approval.requested")
			b.wait("form.approve")
			b.wait("form.deny")
			b.wait("#cancel")
			b.waitText("#status", "waiting")
		}},
		{"context-view", func(t *testing.T) {
			// Three model requests so far (activate, write, shell): each
			// shows the context the model saw, the skill's activation in it.
			if n := b.count("#requests .request"); n != 3 {
				b.fail("%d requests shown, want 3", n)
			}
			if got := b.text("#requests"); !strings.Contains(got, "csv-inspector") {
				b.fail("the requests' context does not show the skill: %q", got)
			}
		}},
		{"approve", func(t *testing.T) {
			// A second tab of the same session approves. This one, not
			// reloaded, must get the rest of the run over its event stream
			// as it happens, and show the finished task in place.
			ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
			defer cancel()
			stream := chromedp.Events(ctx, network.EventSourceMessageReceived)
			b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
			other := b.sibling()
			other.visit(taskPage, "form.approve")
			if code := other.submit("form.approve"); code != http.StatusOK {
				other.fail("approving: %d", code)
			}
			var seen []string
			for ev, err := range stream {
				if err != nil {
					b.fail("the task page's event stream ended before task.completed (it had %v): %v", seen, err)
				}
				var e struct{ Type string }
				if json.Unmarshal([]byte(ev.Data), &e) == nil && e.Type != "" {
					seen = append(seen, e.Type)
				}
				if e.Type == "task.completed" {
					break
				}
			}
			if !slices.Contains(seen, "tool.approval.decided") || !slices.Contains(seen, "tool.result") {
				b.fail("the stream did not carry the approved call's events: %v", seen)
			}
			b.waitText("#events", "task.completed")
			b.waitText("#status", "completed")
			b.waitText("#output", "3 rows")
			b.waitJS("the fourth request shown", `document.querySelectorAll("#requests .request").length === 4`)
			if b.count("form.approve") != 0 {
				b.fail("a finished task still offers an approval")
			}
			if !chromeGet(b, "check the page was not reloaded", chromedp.Evaluate[bool](`window.notReloaded === true`)) {
				b.fail("the task page was reloaded instead of updating in place")
			}
			b.shotOf("requests", "#requests")
		}},
		{"deny", func(t *testing.T) {
			taskPage = chromeStartTask(b, "analyst", "How many rows has orders.csv? (denied)")
			b.wait("form.deny")
			if code := b.submit("form.deny"); code != http.StatusOK {
				b.fail("denying: %d", code)
			}
			b.waitText("#status", "completed")
			b.waitText("#events", "tool.approval.decided")
			b.waitText("#conversation .turn.call.failed", "denied: the call was rejected")
		}},
		{"cancel", func(t *testing.T) {
			taskPage = chromeStartTask(b, "analyst", "How many rows has orders.csv? (cancelled)")
			b.wait("form.approve")
			if code := b.submit("#cancel"); code != http.StatusOK {
				b.fail("cancelling: %d", code)
			}
			b.visit(taskPage, "#status")
			b.waitText("#status", "cancelled")
			if b.count("form.approve") != 0 || b.count("#cancel") != 0 {
				b.fail("a cancelled task still offers an approval or a cancel")
			}
			b.visit("/ui/tasks", "#tasks")
			if n := b.count("#tasks a.task"); n != 3 {
				b.fail("/ui/tasks lists %d tasks, want 3", n)
			}
		}},
		{"conversation", func(t *testing.T) { chromeConversation(t, srv, b) }},
		{"cross-site-form", func(t *testing.T) {
			// A page of another origin (another port of the same host: the
			// same site, so the SameSite cookie is sent) posts an edit to
			// the UI. The browser marks it cross-origin and the UI refuses
			// it before anything happens.
			var before struct{ Version int }
			srv.api(t, chromeAdminToken, "GET", "/v1/workspaces/default/skills/csv-inspector", nil, http.StatusOK, &before)
			evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `<!doctype html><form id="evil" method="post" action="%s%s/edit">
<input type="hidden" name="file:SKILL.md" value="---&#10;name: csv-inspector&#10;description: Pwned.&#10;---&#10;Pwned.&#10;">
<input type="hidden" name="message" value="pwned"><button type="submit">Win a prize</button></form>`, srv.url, skillPage)
			}))
			defer evil.Close()
			chromeGet(b, "open the other site's page", chromedp.NavigateResponse(evil.URL))
			b.wait("#evil")
			if code := b.submit("#evil"); code != http.StatusForbidden {
				b.fail("a cross-origin post: %d, want 403", code)
			}
			if msg := b.text("#error"); !strings.Contains(msg, "cross-site") {
				b.fail("#error is %q", msg)
			}
			var after struct{ Version int }
			srv.api(t, chromeAdminToken, "GET", "/v1/workspaces/default/skills/csv-inspector", nil, http.StatusOK, &after)
			if after.Version != before.Version {
				b.fail("a cross-site post made version %d", after.Version)
			}
		}},
		{"sign-out", func(t *testing.T) {
			b.visit("/ui/skills", "#skills")
			if code := b.submit("form#logout"); code != http.StatusOK {
				b.fail("sign out: %d", code)
			}
			if p := b.path(); p != "/ui/login" {
				b.fail("signing out led to %s", p)
			}
			b.open("/ui/skills")
			if p := b.path(); p != "/ui/login" {
				b.fail("after signing out /ui/skills is at %s", p)
			}
		}},
	})
}

// chromeRefused submits the form sel and checks that the UI refuses it with
// 403 and the service's message.
func chromeRefused(b *chromeTab, form, msg string) {
	b.t.Helper()
	if code := b.submit(form); code != http.StatusForbidden {
		b.fail("%s: %d, want 403", form, code)
	}
	if got := b.text("#error"); !strings.Contains(got, msg) {
		b.fail("%s: #error is %q, want %q", form, got, msg)
	}
}

// chromeRefusalScenario: a viewer of the default workspace, and a token of
// another workspace, use the same pages: the viewer's edits are refused
// with the service's message, and another workspace's objects are 404,
// for both.
func chromeRefusalScenario(t *testing.T, srv *chromeServer, b *chromeTab) {
	var viewer, member, other struct{ Token string }
	srv.api(t, chromeAdminToken, "POST", "/v1/workspaces/default/tokens", map[string]any{"name": "browser-viewer", "role": "viewer"}, http.StatusCreated, &viewer)
	srv.api(t, chromeAdminToken, "POST", "/v1/workspaces/default/tokens", map[string]any{"name": "browser-member", "role": "member"}, http.StatusCreated, &member)
	// An agent whose one shell call waits for an approval.
	careful := filepath.Join(t.TempDir(), "careful.json")
	if err := os.WriteFile(careful, []byte(`[{"tool_calls": [{"name": "shell", "arguments": {"command": "echo ran-it"}}]}, {"text": "done"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.api(t, chromeAdminToken, "POST", "/v1/workspaces/default/agents", map[string]any{"name": "careful",
		"config": map[string]any{"model": "scripted:" + careful, "context": map[string]any{"window": 32000},
			"tools": map[string]any{"require_approval": []string{"shell"}}}}, http.StatusCreated, nil)
	var mine struct{ ID string }
	srv.api(t, chromeAdminToken, "POST", "/v1/workspaces/default/skills/upload", chromeZipSkill(t, exampleSkill("http-api-review")), http.StatusCreated, &mine)

	// Another workspace, with a skill, an agent and a finished task.
	srv.api(t, chromeAdminToken, "POST", "/v1/workspaces", map[string]any{"name": "team-b"}, http.StatusCreated, nil)
	srv.api(t, chromeAdminToken, "POST", "/v1/workspaces/team-b/tokens", map[string]any{"name": "b-admin", "role": "admin"}, http.StatusCreated, &other)
	var theirSkill, theirAgent, theirTask struct{ ID string }
	srv.api(t, other.Token, "POST", "/v1/workspaces/team-b/skills/upload", chromeZipSkill(t, exampleSkill("csv-inspector")), http.StatusCreated, &theirSkill)
	answer := filepath.Join(t.TempDir(), "answer.json")
	if err := os.WriteFile(answer, []byte(`[{"text": "team-b's answer"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.api(t, other.Token, "POST", "/v1/workspaces/team-b/agents", map[string]any{"name": "b-agent",
		"config": map[string]any{"model": "scripted:" + answer, "context": map[string]any{"window": 32000}}}, http.StatusCreated, &theirAgent)
	srv.api(t, other.Token, "POST", "/v1/workspaces/team-b/agents/"+theirAgent.ID+"/tasks", map[string]any{"input": "hello"}, http.StatusCreated, &theirTask)
	theirs := []string{
		"/ui/skills/" + theirSkill.ID,
		"/ui/skills/" + theirSkill.ID + "/files/SKILL.md",
		"/ui/skills/" + theirSkill.ID + "/edit",
		"/ui/skills/" + theirSkill.ID + "/diff?from=1&to=1",
		"/ui/agents/" + theirAgent.ID,
		"/ui/tasks/" + theirTask.ID,
	}
	notFound := func(paths ...string) {
		b.t.Helper()
		for _, p := range paths {
			if code := b.open(p); code != http.StatusNotFound {
				b.fail("%s: %d, want 404", p, code)
			}
			if body := b.text("body"); strings.Contains(body, "team-b's answer") || strings.Contains(body, "awk") {
				b.fail("%s shows another workspace's content", p)
			}
		}
	}

	runChromeSteps(t, b, []chromeStep{
		{"viewer-sign-in", func(t *testing.T) {
			b.signIn(viewer.Token)
			b.checkChrome("default", "viewer")
		}},
		{"viewer-edit-refused", func(t *testing.T) {
			sel := `textarea[name="file:SKILL.md"]`
			b.visit("/ui/skills/"+mine.ID+"/edit", sel)
			b.do("edit SKILL.md", chromedp.SetValue(chromedp.CSS(sel), "---\nname: http-api-review\ndescription: A viewer's edit.\n---\nNo.\n"))
			if code := b.submit(`form:has(textarea[name="file:SKILL.md"])`); code != http.StatusForbidden {
				b.fail("a viewer's edit: %d, want 403", code)
			}
			if msg := b.text("#error"); !strings.Contains(msg, "needs the member role") {
				b.fail("#error is %q, not the service's refusal", msg)
			}
			var sk struct{ Version int }
			srv.api(t, chromeAdminToken, "GET", "/v1/workspaces/default/skills/"+mine.ID, nil, http.StatusOK, &sk)
			if sk.Version != 1 {
				b.fail("the viewer's edit made version %d", sk.Version)
			}
		}},
		{"viewer-forms-refused", func(t *testing.T) {
			// Every form that changes something is refused with the
			// service's message; none changes anything.
			archive := filepath.Join(t.TempDir(), "release-notes.zip")
			if err := os.WriteFile(archive, chromeZipSkill(t, exampleSkill("release-notes")), 0o644); err != nil {
				t.Fatal(err)
			}
			b.visit("/ui/skills", "#upload")
			b.do("choose the archive", chromedp.SetUploadFiles(chromedp.CSS(`#upload input[name="archive"]`), []string{archive}))
			// The upload form's script sends it with XMLHttpRequest (for the
			// progress bar) and writes a refusal's page in place.
			b.do("upload", chromedp.Click(chromedp.CSS(`#upload button[type="submit"]`)))
			b.waitText("#error", "needs the member role")

			b.visit("/ui/agents/new", "#agent-form")
			b.fill("#agent-form", map[string]any{"name": "viewer-agent", "model": "scripted:" + chromeTaskScript(t)})
			chromeRefused(b, "#agent-form", "needs the member role")

			b.visit("/ui/tasks", "#start")
			b.fill("#start", map[string]any{"agent": "careful", "input": "Run it"})
			chromeRefused(b, "#start", "needs the member role")

			srv.api(t, chromeAdminToken, "GET", "/v1/workspaces/default/skills/release-notes", nil, http.StatusNotFound, nil)
			srv.api(t, chromeAdminToken, "GET", "/v1/workspaces/default/agents/viewer-agent", nil, http.StatusNotFound, nil)
			var tasks struct{ Total int }
			srv.api(t, chromeAdminToken, "GET", "/v1/workspaces/default/tasks?agent=careful", nil, http.StatusOK, &tasks)
			if tasks.Total != 0 {
				b.fail("the viewer's start form started %d task(s)", tasks.Total)
			}
		}},
		{"approval-needs-admin", func(t *testing.T) {
			// A task waits for an approval; a viewer is refused, and so is
			// a member, who may start tasks but not answer approvals.
			var task struct{ ID string }
			srv.api(t, chromeAdminToken, "POST", "/v1/workspaces/default/agents/careful/tasks", map[string]any{"input": "Run it"}, http.StatusCreated, &task)
			b.visit("/ui/tasks/"+task.ID, "form.approve")
			chromeRefused(b, "form.approve", "needs the admin role")
			b.submit("form#logout")
			b.signIn(member.Token)
			b.checkChrome("default", "member")
			b.visit("/ui/tasks/"+task.ID, "form.approve")
			chromeRefused(b, "form.approve", "needs the admin role")
			b.visit("/ui/tasks/"+task.ID, "#status")
			if st := b.text("#status"); !strings.Contains(st, "waiting") {
				b.fail("after the refusals the task is %q", st)
			}
			// Cancelled through the API, the task ends; the page, following
			// its events, reloads to show it.
			srv.api(t, chromeAdminToken, "POST", "/v1/workspaces/default/tasks/"+task.ID+"/cancel", nil, http.StatusOK, nil)
			b.waitText("#status", "cancelled")
		}},
		{"viewer-other-workspace", func(t *testing.T) {
			notFound(theirs...)
		}},
		{"other-workspace", func(t *testing.T) {
			b.submit("form#logout")
			b.signIn(other.Token)
			b.checkChrome("team-b", "admin")
			b.visit("/ui/skills/"+theirSkill.ID, "#skill-md")
			notFound("/ui/skills/"+mine.ID, "/ui/skills/"+mine.ID+"/edit")
		}},
	})
}
