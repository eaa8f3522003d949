package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
)

// Cookie names. The session cookie holds the API token itself: the server
// keeps no session table, so sessions survive restarts, work across
// several server processes and end exactly when the token is revoked or
// expires (every request authenticates it again, through the service's
// auth cache). The cookie is HttpOnly and SameSite=Strict, so page
// scripts cannot read it and other sites cannot send it.
const (
	sessionCookie = "skilld_session"
	// loginCookie is the double-submit CSRF token of the sign-in form,
	// which has no session to derive one from yet.
	loginCookie = "skilld_login"
)

// Form body limits: a form is small, except the editor (every text file
// of a skill) and an upload (the API's archive limit plus the form's
// overhead).
const (
	smallForm  = 1 << 20
	editForm   = 60 << 20
	uploadForm = 64<<20 + 1<<20
)

// session is the signed-in caller of one request.
type session struct {
	actor service.Actor
	self  *service.TokenSelf
	csrf  string
}

// csrfToken derives the session's CSRF token from its API token: only
// someone holding the token (which the HttpOnly cookie keeps from
// scripts and other sites) can compute it, it needs no server state, and
// it changes with the token.
func csrfToken(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("skilld ui csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// secure reports whether cookies must be Secure: over TLS, or behind a
// proxy that says it terminated TLS. Trusting that header can only make
// the cookie stricter, never weaker.
func (ui *UI) secure(r *http.Request) bool {
	return ui.opts.SecureCookies || r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func (ui *UI) setCookie(w http.ResponseWriter, r *http.Request, name, value, path string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: path, MaxAge: maxAge,
		HttpOnly: true, Secure: ui.secure(r), SameSite: http.SameSiteStrictMode})
}

// authenticate resolves the session cookie through the service.
func (ui *UI) authenticate(r *http.Request) (*session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, skilld.Errorf(skilld.EUNAUTHORIZED, "sign in first")
	}
	a, err := ui.opts.AuthLimit.Authenticate(r, c.Value, ui.svc.Authenticate)
	if err != nil {
		return nil, err
	}
	self, err := ui.svc.Self(r.Context(), a, service.TokenSelfParams{})
	if err != nil {
		return nil, err
	}
	return &session{actor: a, self: self, csrf: csrfToken(c.Value)}, nil
}

// page wraps a GET handler: without a valid session the browser is sent
// to the sign-in page.
func (ui *UI) page(fn func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := ui.authenticate(r)
		if err != nil {
			ui.toLogin(w, r, err)
			return
		}
		fn(w, r, s)
	}
}

func (ui *UI) toLogin(w http.ResponseWriter, r *http.Request, err error) {
	if skilld.ErrorCode(err) != skilld.EUNAUTHORIZED {
		ui.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}

// form wraps a POST handler. Refusals come before the body is read, in
// this order: a cross-site request, no session, a role below need (the
// service's own check and message), then the CSRF token of the form.
func (ui *UI) form(need skilld.Role, maxBody int64, fn func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := sameOrigin(r); err != nil {
			ui.fail(w, r, nil, err)
			return
		}
		s, err := ui.authenticate(r)
		if err != nil {
			ui.toLogin(w, r, err)
			return
		}
		if err := s.actor.Can(need); err != nil {
			ui.fail(w, r, s, err)
			return
		}
		release, err := ui.reserve(r, maxBody)
		if err != nil {
			ui.fail(w, r, s, err)
			return
		}
		defer release()
		r.Body = http.MaxBytesReader(w, &idleBody{ReadCloser: r.Body, rc: http.NewResponseController(w), idle: ui.opts.BodyIdleTimeout}, maxBody)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
			err = r.ParseMultipartForm(8 << 20)
		} else {
			err = r.ParseForm()
		}
		if err == nil {
			// The body is read: the connection may idle again.
			http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				ui.fail(w, r, s, skilld.Errorf(skilld.ETOOLARGE, "the form is larger than %d bytes", maxBody))
				return
			}
			ui.fail(w, r, s, skilld.Errorf(skilld.EINVALID, "the form could not be read: %v", err))
			return
		}
		if !equal(r.PostFormValue("csrf"), s.csrf) {
			ui.fail(w, r, s, skilld.Errorf(skilld.EFORBIDDEN, "the form's security token is missing or stale: reload the page and try again"))
			return
		}
		fn(w, r, s)
	}
}

// reserve waits a little for room to read a body of at most maxBody
// bytes (less when the request says its length), so that uploads at once
// cannot hold more memory than MaxBodyBytesInFlight.
func (ui *UI) reserve(r *http.Request, maxBody int64) (func(), error) {
	n := maxBody
	if r.ContentLength >= 0 && r.ContentLength < n {
		n = max(r.ContentLength, 1)
	}
	ctx, cancel := context.WithTimeout(r.Context(), bodyReserveWait)
	defer cancel()
	if err := ui.inFlight.Acquire(ctx, n); err != nil {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "the server is reading too many uploads at once; retry in a few seconds")
	}
	return func() { ui.inFlight.Release(n) }, nil
}

// idleBody gives each read of a body a deadline of idle from now.
type idleBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.idle))
	return b.ReadCloser.Read(p)
}

// bodyReserveWait is how long a form waits for room before it is refused.
const bodyReserveWait = 5 * time.Second

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// sameOrigin refuses a POST that a browser says came from another site.
// Browsers send Sec-Fetch-Site (and Origin) with form posts; clients that
// send neither still need the CSRF token, which only pages of this site
// hold.
func sameOrigin(r *http.Request) error {
	refuse := skilld.Errorf(skilld.EFORBIDDEN, "cross-site form submissions are refused")
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return refuse
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || o == "null" || !strings.EqualFold(u.Host, r.Host) {
			return refuse
		}
	}
	return nil
}

// loginPage shows the sign-in form with a fresh double-submit token.
func (ui *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	ui.showLogin(w, r, http.StatusOK, "")
}

func (ui *UI) showLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	b := make([]byte, 32)
	rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	ui.setCookie(w, r, loginCookie, tok, Prefix+"login", 3600)
	ui.render(w, r, &session{csrf: tok}, status, "login", "Sign in", errorData{Message: msg})
}

// login checks the token with the service and keeps it in the session
// cookie.
func (ui *UI) login(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r); err != nil {
		ui.showLogin(w, r, http.StatusForbidden, skilld.ErrorMessage(err))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, smallForm)
	if err := r.ParseForm(); err != nil {
		ui.showLogin(w, r, http.StatusBadRequest, "the form could not be read")
		return
	}
	c, err := r.Cookie(loginCookie)
	if err != nil || c.Value == "" || !equal(c.Value, r.PostFormValue("csrf")) {
		ui.showLogin(w, r, http.StatusForbidden, "the sign-in form expired: try again")
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		ui.showLogin(w, r, http.StatusBadRequest, "enter a token")
		return
	}
	a, err := ui.opts.AuthLimit.Authenticate(r, token, ui.svc.Authenticate)
	if err == nil {
		_, err = ui.svc.Self(r.Context(), a, service.TokenSelfParams{})
	}
	if err != nil {
		if after := httpapi.RetryAfterOf(err); after != "" {
			w.Header().Set("Retry-After", after)
		}
		ui.showLogin(w, r, status(err), skilld.ErrorMessage(err))
		return
	}
	ui.setCookie(w, r, loginCookie, "", Prefix+"login", -1)
	ui.setCookie(w, r, sessionCookie, token, Prefix, 0)
	http.Redirect(w, r, Prefix+"skills", http.StatusSeeOther)
}

// logout clears the cookie. The token stays valid: it is the caller's API
// token, which only its admin revokes.
func (ui *UI) logout(w http.ResponseWriter, r *http.Request, _ *session) {
	ui.setCookie(w, r, sessionCookie, "", Prefix, -1)
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}
