package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/skilld/skilld/service"
)

func TestSignInAndOut(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	if p := b.get("/ui/skills"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/login" {
		t.Fatalf("signed out, /ui/skills: %d %q, want a redirect to /ui/login", p.status, p.header.Get("Location"))
	}
	if p := b.get("/"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/" {
		t.Fatalf("GET /: %d %q, want a redirect to /ui/", p.status, p.header.Get("Location"))
	}
	lp := b.get("/ui/login")
	for _, want := range []string{`id="login"`, `name="token"`, `type="submit"`} {
		if !strings.Contains(lp.body, want) {
			t.Errorf("login page lacks %s", want)
		}
	}
	if p := b.login("not-a-token"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, `id="error"`) {
		t.Fatalf("bad token: %d, want 401 with #error:\n%s", p.status, p.body)
	}
	// Without the login form's own token the sign-in is refused.
	if p := e.browser().post("/ui/login", url.Values{"token": {e.memberTok}}); p.status != http.StatusForbidden {
		t.Fatalf("sign-in without csrf: %d, want 403", p.status)
	}

	p := b.login(e.memberTok)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/skills" {
		t.Fatalf("sign-in: %d %q", p.status, p.header.Get("Location"))
	}
	var session *http.Cookie
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "skilld_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure || session.Path != "/ui/" {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, not Secure over plain HTTP, path /ui/", session)
	}
	home := b.get("/ui/skills")
	if home.status != http.StatusOK {
		t.Fatalf("signed in, /ui/skills: %d", home.status)
	}
	who := element(t, home, "whoami")
	if !strings.Contains(who[:80], "team · member") {
		t.Errorf("#whoami: %q, want workspace team and role member", who[:80])
	}
	for _, link := range []string{`href="/ui/skills" aria-current="page">Skills`, `href="/ui/catalog">Catalog`, `href="/ui/agents">Agents`, `href="/ui/tasks">Tasks`, `id="logout"`} {
		if !strings.Contains(element(t, home, "nav"), link) {
			t.Errorf("#nav lacks %s", link)
		}
	}

	// Signing out needs the form's token too.
	if p := b.post("/ui/logout", url.Values{}); p.status != http.StatusForbidden {
		t.Fatalf("logout without csrf: %d, want 403", p.status)
	}
	p = b.post("/ui/logout", url.Values{"csrf": {csrfOf(t, home)}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/login" {
		t.Fatalf("logout: %d %q", p.status, p.header.Get("Location"))
	}
	if p := b.get("/ui/skills"); p.status != http.StatusSeeOther {
		t.Fatalf("after sign-out /ui/skills: %d, want a redirect to sign in", p.status)
	}
}

func TestSessionEndsWithToken(t *testing.T) {
	e := newEnv(t)
	tok, _ := e.token(e.admin, "member")
	b := e.signedIn(tok)
	a, _ := e.svc.Authenticate(t.Context(), tok)
	if err := e.svc.RevokeToken(t.Context(), e.admin, service.RevokeTokenParams{ID: a.TokenID}); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/ui/skills"); p.status == http.StatusOK {
		t.Fatalf("a revoked token still opens pages")
	}
}

func TestCSRF(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn(e.memberTok)
	good := b.csrf()
	form := func(csrf string) url.Values {
		return url.Values{"csrf": {csrf}, "name": {"a1"}, "model": {"openai:gpt-4o"}}
	}
	cases := []struct {
		name    string
		form    url.Values
		headers []string
	}{
		{"no token", form(""), nil},
		{"wrong token", form(good[:len(good)-2] + "xx"), nil},
		{"another session's token", form(csrfOf(t, e.signedIn(e.adminTok).get("/ui/skills"))), nil},
		{"cross-site fetch", form(good), []string{"Sec-Fetch-Site", "cross-site"}},
		{"foreign origin", form(good), []string{"Origin", "https://evil.example"}},
	}
	for _, c := range cases {
		p := b.post("/ui/agents/new", c.form, c.headers...)
		if p.status != http.StatusForbidden || !strings.Contains(p.body, `id="error"`) {
			t.Errorf("%s: %d, want 403 with #error", c.name, p.status)
		}
	}
	if got, _ := e.svc.ListAgents(t.Context(), e.member, service.ListAgentsParams{}); got.Total != 0 {
		t.Fatalf("a refused form created %d agents", got.Total)
	}
	p := b.post("/ui/agents/new", form(good), "Origin", e.srv.URL, "Sec-Fetch-Site", "same-origin")
	if p.status != http.StatusSeeOther {
		t.Fatalf("same-origin form with its token: %d\n%s", p.status, p.body)
	}
}
