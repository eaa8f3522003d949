package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/authlimit"
	"github.com/skilld/skilld/internal/streamlimit"
	"github.com/skilld/skilld/service"
)

// HTTPOptions configure HTTPHandler.
type HTTPOptions struct {
	Options
	// SessionTimeout closes sessions idle this long (default 30 minutes),
	// so abandoned clients do not hold servers forever.
	SessionTimeout time.Duration
	// AllowedOrigins are the browser origins ("https://app.example.com",
	// as ParseOrigins gives them) besides the server's own that may call
	// the endpoint. A request with any other Origin header is refused.
	AllowedOrigins []string
	// Sessions, when set, bounds the sessions open at once, per token
	// (429) and in all (503), each held from its initialize until it is
	// deleted or times out. Once closed (the server is stopping) it
	// refuses new sessions and ends the sessions' open GET streams, which
	// would otherwise hold the server's shutdown until they time out.
	Sessions *streamlimit.Limiter
	// AuthLimit, when set, limits failed token checks per client address
	// (shared with the REST API and the web UI).
	AuthLimit *authlimit.Limiter
}

// HTTPHandler serves MCP over streamable HTTP. Every request carries
// "Authorization: Bearer <token>"; the token's workspace is served, or the
// one named by ?workspace= (an instance admin's choice, or a check that a
// workspace token is where the client thinks). A client may declare its
// model's window with ?context_window=N. Each session gets its own server
// acting for the token, and every later request of the session must come
// with the same token.
func HTTPHandler(svc *service.Service, opts HTTPOptions) http.Handler {
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.caches == nil {
		// One for all sessions: most sessions ask what others asked.
		opts.caches = newCaches()
	}
	h := &httpHandler{svc: svc, opts: opts}
	// One server without tools answers the SDK's per-request questions
	// (supported protocol versions) for requests of existing sessions, so
	// they do not build a server each.
	h.probe = mcp.NewServer(&mcp.Implementation{Name: "skilld", Version: opts.Version}, nil)
	h.sdk = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{
		Logger:         opts.Logger,
		SessionTimeout: opts.SessionTimeout,
	})
	// The SDK binds a session to TokenInfo.UserID, refusing another token
	// on it; the token is already checked, so the verifier only passes on
	// what authenticate found.
	h.bound = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		rs, _ := ctx.Value(requestKey{}).(*requestState)
		if rs == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: rs.actor.TokenID}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h.sdk)
	return h
}

type httpHandler struct {
	svc   *service.Service
	opts  HTTPOptions
	probe *mcp.Server
	sdk   *mcp.StreamableHTTPHandler
	bound http.Handler
}

type requestKey struct{}

// requestState is one request's actor and, once built, its server: the
// SDK asks for the server more than once per request.
type requestState struct {
	actor  service.Actor
	window int
	once   sync.Once
	srv    *mcp.Server
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Before the token: a page on another origin must learn nothing, not
	// even whether its token would do.
	if err := h.checkOrigin(r); err != nil {
		writeError(w, err)
		return
	}
	secret, ok := bearer(r)
	if !ok {
		writeError(w, skilld.Errorf(skilld.EUNAUTHORIZED, "no bearer token: send Authorization: Bearer <skilld API token>"))
		return
	}
	actor, err := h.opts.AuthLimit.Authenticate(r, secret, h.svc.Authenticate)
	if err == nil && r.URL.Query().Get("workspace") != "" {
		actor, err = h.svc.In(r.Context(), actor, r.URL.Query().Get("workspace"))
	}
	if err == nil {
		err = actor.Can(skilld.RoleViewer)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	window := h.opts.Window
	if v := r.URL.Query().Get("context_window"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			writeError(w, skilld.Errorf(skilld.EINVALID, "context_window must be a positive number of tokens, not %q", v))
			return
		}
		window = n
	}
	// A POST without a session is an initialize: it makes a session,
	// which holds a place until it ends.
	var release func()
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		if release, err = h.opts.Sessions.Acquire(actor.TokenID); err != nil {
			writeError(w, err)
			return
		}
	}
	rs := &requestState{actor: actor, window: window}
	ctx := context.WithValue(r.Context(), requestKey{}, rs)
	if r.Method == http.MethodGet {
		h.serveStream(w, r.WithContext(ctx))
		return
	}
	h.bound.ServeHTTP(w, r.WithContext(ctx))
	if release != nil {
		h.hold(rs, release)
	}
}

// serveStream serves a session's GET stream (server-to-client messages)
// until the client leaves or the server stops. The SDK ends it with its
// request's context only, which http.Server.Shutdown leaves alone, so the
// context also ends when Sessions is closed; the client is then told to
// come back after the retry time, which the SDK's and the TypeScript
// SDK's clients do by themselves.
func (h *httpHandler) serveStream(w http.ResponseWriter, r *http.Request) {
	closing := h.opts.Sessions.Done()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	h.bound.ServeHTTP(w, r.WithContext(ctx))
	select {
	case <-closing:
		if r.Context().Err() == nil && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			// Nothing else writes on the stream once the SDK returned.
			fmt.Fprintf(w, "retry: %d\n\n", h.opts.Sessions.RetryAfter().Milliseconds())
			http.NewResponseController(w).Flush()
		}
	default:
	}
}

// hold keeps a new session's place until the session ends (a DELETE, the
// idle timeout), or gives it back at once when the request made none (a
// refused or failed initialize). Each session has a server of its own,
// so the server's one session is the request's.
func (h *httpHandler) hold(rs *requestState, release func()) {
	if rs.srv != nil {
		for ss := range rs.srv.Sessions() {
			go func() {
				ss.Wait()
				release()
			}()
			return
		}
	}
	release()
}

// server is the SDK's getServer: a new server for a new session, acting
// for the request's token.
func (h *httpHandler) server(r *http.Request) *mcp.Server {
	rs, _ := r.Context().Value(requestKey{}).(*requestState)
	if rs == nil {
		return nil
	}
	if r.Header.Get("Mcp-Session-Id") != "" {
		return h.probe
	}
	rs.once.Do(func() {
		opts := h.opts.Options
		opts.Window = rs.window
		// The session outlives this request: its server must not stop
		// with the request's context.
		s, err := New(context.WithoutCancel(r.Context()), h.svc, rs.actor, opts)
		if err != nil {
			h.opts.Logger.Warn("mcp: starting a session", "err", err)
			return
		}
		rs.srv = s.mcp
	})
	return rs.srv
}

// checkOrigin refuses requests a browser sends from a page of another
// origin, as the streamable HTTP transport asks of servers: without it a
// page (or a DNS name rebound to this server) could drive the endpoint
// with a token it got hold of. Requests without Origin are not from a
// browser page and pass.
func (h *httpHandler) checkOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	if o == "" {
		return nil
	}
	origin, err := normalOrigin(o)
	if err == nil {
		// The server's own origin, whichever scheme the client (or a
		// proxy in front) used to reach it.
		for _, scheme := range []string{"http", "https"} {
			if own, err := normalOrigin(scheme + "://" + r.Host); err == nil && own == origin {
				return nil
			}
		}
		if slices.Contains(h.opts.AllowedOrigins, origin) {
			return nil
		}
	}
	return skilld.Errorf(skilld.EFORBIDDEN, "requests from origin %q are refused: it is neither this server's origin nor in --mcp-allowed-origins", o)
}

// ParseOrigins reads a comma-separated list of origins (scheme://host
// with an optional port, nothing after it), as --mcp-allowed-origins
// takes them, in the form AllowedOrigins compares.
func ParseOrigins(s string) ([]string, error) {
	var out []string
	for o := range strings.SplitSeq(s, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		n, err := normalOrigin(o)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// normalOrigin is an origin in one spelling: lower case, without the
// scheme's default port.
func normalOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", skilld.Errorf(skilld.EINVALID, "%q is not an origin: want scheme://host[:port], http or https, nothing after it", s)
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if p := u.Port(); (scheme == "http" && p == "80") || (scheme == "https" && p == "443") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return scheme + "://" + host, nil
}

func bearer(r *http.Request) (string, bool) {
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(secret) == "" {
		return "", false
	}
	return strings.TrimSpace(secret), true
}

// writeError answers a request refused before MCP starts, in the REST
// API's error shape, with the status its code means.
func writeError(w http.ResponseWriter, err error) {
	code := skilld.ErrorCode(err)
	status := http.StatusInternalServerError
	switch code {
	case skilld.EUNAUTHORIZED:
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Bearer realm="skilld"`)
	case skilld.EFORBIDDEN:
		status = http.StatusForbidden
	case skilld.ENOTFOUND:
		status = http.StatusNotFound
	case skilld.EINVALID:
		status = http.StatusBadRequest
	case skilld.ERATELIMITED:
		status = http.StatusTooManyRequests
	case skilld.EUNAVAILABLE:
		status = http.StatusServiceUnavailable
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		after := "5" // as the REST API's 503 without a cause's own wait
		for _, d := range skilld.ErrorDetails(err) {
			if d.Field == "retry_after" {
				after = d.Message
			}
		}
		w.Header().Set("Retry-After", after)
	}
	body := map[string]any{"code": code, "message": skilld.ErrorMessage(err)}
	if details := skilld.ErrorDetails(err); len(details) > 0 {
		body["details"] = details
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": body})
}
