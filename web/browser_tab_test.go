package web_test

// The browser tests' driver: headless Chromium through chromedp, one tab
// per signed-in user, every step waiting on elements (never a fixed time)
// and leaving a screenshot.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromeShots is the folder the screenshots go to.
func chromeShots(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SKILLD_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots go to %s", dir)
	return dir
}

// startChrome starts headless Chromium and returns a context for it;
// each scenario opens its own browser context (its own cookies) from it.
func startChrome(t *testing.T) context.Context {
	t.Helper()
	path := requireChromeTool(t, "Chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	return ctx
}

// chromeTab is one browser tab in its own browser context, on the server.
type chromeTab struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
	name  string // prefix of the screenshots' names
	n     int

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

func newChromeTab(t *testing.T, browser context.Context, base, shots, name string) *chromeTab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	b := &chromeTab{t: t, ctx: ctx, base: base, shots: shots, name: name}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// checkConsole fails the test for what the pages' scripts threw and for
// what the browser refused under the Content-Security-Policy: a page that
// works only because a test does not look at its console is broken.
func (b *chromeTab) checkConsole() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.console {
		if m.IsException() || m.Source == "security" || strings.Contains(m.Text, "Content Security Policy") {
			b.t.Errorf("browser console: %s %s:%d %s", m.Type, m.URL, m.Line+1, m.Text)
		}
	}
	b.console = nil
}

// fail ends the test with what went wrong, where the tab was and what it
// showed (a screenshot named FAILED).
func (b *chromeTab) fail(format string, args ...any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		os.WriteFile(filepath.Join(b.shots, b.name+"-FAILED.png"), png, 0o644)
	}
	if len(text) > 4000 {
		text = text[:4000] + "…"
	}
	b.t.Fatalf("%s\nat %s, the page says:\n%s", fmt.Sprintf(format, args...), loc, text)
}

// do runs steps in order; what fails ends the test.
func (b *chromeTab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail("%s: %v", what, err)
	}
}

// chromeGet runs one action that returns a value.
func chromeGet[T any](b *chromeTab, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.fail("%s: %v", what, err)
	}
	return v
}

// open navigates to a path of the server and returns the HTTP status of
// the page.
func (b *chromeTab) open(path string) int64 {
	b.t.Helper()
	resp := chromeGet(b, "open "+path, chromedp.NavigateResponse(b.base+path))
	if resp == nil {
		b.fail("open %s: no response", path)
	}
	return resp.Status
}

// visit opens a path that must answer 200 and waits for sel on it.
func (b *chromeTab) visit(path, sel string) {
	b.t.Helper()
	if code := b.open(path); code != http.StatusOK {
		b.fail("GET %s: %d", path, code)
	}
	b.wait(sel)
}

// wait waits until an element matching the CSS selector is visible.
func (b *chromeTab) wait(sel string) {
	b.t.Helper()
	b.do("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

// waitText waits until the text of the element matching sel holds substr
// (checked on every change of the page, as live updates arrive).
func (b *chromeTab) waitText(sel, substr string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, substr)
	b.waitJS(fmt.Sprintf("wait for %q in %s", substr, sel), js)
}

// waitJS waits until the JavaScript expression is true, checking it on
// every change of the page. A page that reloads meanwhile (the task page
// does, when its task starts waiting or ends) is waited on again.
func (b *chromeTab) waitJS(what, js string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(0)))
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			b.fail("%s: %v", what, err)
		}
		// The document went away under the poll: wait for the next one.
		chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("body")))
	}
}

// text is the text of the first element matching sel.
func (b *chromeTab) text(sel string) string {
	b.t.Helper()
	return chromeGet(b, "text of "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// count is how many elements match sel.
func (b *chromeTab) count(sel string) int {
	b.t.Helper()
	return chromeGet(b, "count "+sel, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
}

// path is the tab's current path.
func (b *chromeTab) path() string {
	b.t.Helper()
	loc := chromeGet(b, "location", chromedp.Location())
	u, err := url.Parse(loc)
	if err != nil {
		b.fail("location %q: %v", loc, err)
	}
	return u.Path
}

// shot saves a PNG screenshot of the whole page as NN-name.png.
func (b *chromeTab) shot(name string) string {
	b.t.Helper()
	// A capture that meets a navigation (the task page reloads itself when
	// its task waits or ends) may never answer: it is taken again.
	var png []byte
	var err error
	for range 3 {
		ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout/4)
		if png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			cancel()
			break
		}
		cancel()
	}
	if err != nil {
		b.fail("screenshot %s: %v", name, err)
	}
	b.n++
	file := filepath.Join(b.shots, fmt.Sprintf("%s-%02d-%s.png", b.name, b.n, name))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return file
}

// submit clicks the submit button of the form sel and waits for the page
// the submission leads to (after any redirect); it returns that page's
// HTTP status.
func (b *chromeTab) submit(form string) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	button := form + ` :is(button:not([type]), button[type="submit"], input[type="submit"])`
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(button)))
	if err != nil {
		b.fail("submit %s: %v", form, err)
	}
	if resp == nil {
		b.fail("submit %s: no response", form)
	}
	return resp.Status
}

// click clicks the element sel (a link) and waits for the page it leads
// to; it returns that page's HTTP status.
func (b *chromeTab) click(sel string) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		b.fail("click %s: %v", sel, err)
	}
	if resp == nil {
		b.fail("click %s: no response", sel)
	}
	return resp.Status
}

// fill sets the fields of the form sel by name: a text field or a select
// gets the value, a checkbox is checked when the value is true, a multiple
// select gets the options whose value or label is one of the values.
func (b *chromeTab) fill(form string, fields map[string]any) {
	b.t.Helper()
	arg, err := json.Marshal(fields)
	if err != nil {
		b.t.Fatal(err)
	}
	js := fmt.Sprintf(`((form, fields) => {
		if (!form) return "no form";
		for (const [name, v] of Object.entries(fields)) {
			const el = form.elements.namedItem(name);
			if (!el) return "no field " + name;
			if (el.type === "select-multiple") {
				for (const o of el.options) o.selected = v.includes(o.value) || v.includes(o.textContent.trim().split(/\s/)[0]);
				if (el.selectedOptions.length !== v.length) return "options " + v + " not all in " + name;
			} else if (el.tagName === "SELECT") {
				const o = [...el.options].find(o => o.value === v || o.textContent.trim() === v);
				if (!o) return "no option " + v + " in " + name;
				el.value = o.value;
			} else if (el.type === "checkbox") {
				el.checked = !!v;
			} else {
				el.value = v;
			}
			el.dispatchEvent(new Event("input", {bubbles: true}));
			el.dispatchEvent(new Event("change", {bubbles: true}));
		}
		return "";
	})(document.querySelector(%q), %s)`, form, arg)
	if msg := chromeGet(b, "fill "+form, chromedp.Evaluate[string](js)); msg != "" {
		b.fail("fill %s: %s", form, msg)
	}
}

// sibling opens another tab in the same browser context (the same
// session).
func (b *chromeTab) sibling() *chromeTab {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	b.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatal(err)
	}
	return &chromeTab{t: b.t, ctx: ctx, base: b.base, shots: b.shots, name: b.name + "-tab2"}
}

// shotOf saves a PNG screenshot of the element sel as NN-name.png.
func (b *chromeTab) shotOf(name, sel string) string {
	b.t.Helper()
	png := chromeGet(b, "screenshot of "+sel, chromedp.Screenshot(chromedp.CSS(sel)))
	b.n++
	file := filepath.Join(b.shots, fmt.Sprintf("%s-%02d-%s.png", b.name, b.n, name))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return file
}

// signIn signs in with token on the login page and waits for the skills
// page it leads to.
func (b *chromeTab) signIn(token string) {
	b.t.Helper()
	b.visit("/ui/login", "#login")
	b.do("type the token", chromedp.SendKeys(chromedp.CSS(`#login input[name="token"]`), token))
	if code := b.submit("#login"); code != http.StatusOK {
		b.fail("sign in: %d", code)
	}
	if p := b.path(); p != "/ui/skills" {
		b.fail("signing in led to %s, not /ui/skills", p)
	}
	b.wait("#whoami")
}

// checkChrome checks what every signed-in page has: the nav with its four
// sections, the sign-out form and who is signed in.
func (b *chromeTab) checkChrome(workspace, role string) {
	b.t.Helper()
	nav := b.text("#nav")
	for _, section := range []string{"Skills", "Catalog", "Agents", "Tasks"} {
		if !strings.Contains(nav, section) {
			b.fail("#nav lacks %q: %q", section, nav)
		}
	}
	if b.count("form#logout") != 1 {
		b.fail("no sign-out form #logout")
	}
	if who := b.text("#whoami"); !strings.Contains(who, workspace) || !strings.Contains(who, role) {
		b.fail("#whoami is %q, want workspace %q and role %q", who, workspace, role)
	}
}

// chromeStep is one step of a scenario, run as a subtest, with a screenshot of
// where it ends.
type chromeStep struct {
	name string
	fn   func(t *testing.T)
}

// runChromeSteps runs the steps in order and stops at the first that fails (the
// later ones build on it).
func runChromeSteps(t *testing.T, b *chromeTab, steps []chromeStep) {
	for i, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			parent := b.t
			b.t = t
			defer func() { b.t = parent }()
			s.fn(t)
			b.shot(s.name)
			b.checkConsole()
		})
		if !ok {
			if i+1 < len(steps) {
				t.Errorf("%d later step(s) not run after %s failed", len(steps)-i-1, s.name)
			}
			return
		}
	}
}
