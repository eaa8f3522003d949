package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// operationTimeout bounds an operation that no longer depends on its
// client (see operation).
const operationTimeout = 10 * time.Minute

// allowed refuses an actor below the route's role, with the service's own
// message, before anything of the request is read.
func allowed(a service.Actor, rt Route) error {
	switch rt.Role {
	case RoleMember:
		return a.Can(skilld.RoleMember)
	case RoleAdmin:
		return a.Can(skilld.RoleAdmin)
	case RoleInstance:
		return a.RequireInstanceAdmin()
	}
	return nil
}

// operation is the one handler behind every operation route: authenticate,
// resolve the workspace, check the route's role, reserve room for the body,
// decode the params, call the service, write the result. Everything that
// can refuse a request comes before its body is read, so no caller without
// the rights can make the server read (or hold) 64 MiB, and the bodies in
// memory at once stay within MaxBodyBytesInFlight.
func (s *Server) operation(rt Route) http.Handler {
	// The decoder is built on the route's first request, not when the
	// server starts; TestDecoders builds every route's, so a route whose
	// params cannot be decoded still fails the tests.
	dec := sync.OnceValue(func() *decoder { return newDecoder(rt, rt.Op.Params) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		actor, err := s.actor(r, rt)
		if err == nil {
			err = allowed(actor, rt)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if rt.Body != BodyNone {
			release, err := s.reserve(r, rt)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			defer release()
			r.Body = &stallGuard{ReadCloser: r.Body, rc: http.NewResponseController(w), header: w.Header(), idle: s.bodyIdle()}
		}
		params, err := dec().decode(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx := r.Context()
		if rt.Method != http.MethodGet {
			// A change whose request arrived whole is carried out even if
			// the client closes its side meanwhile (a half-close after an
			// upload): stopping halfway would help no one.
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), operationTimeout)
			defer cancel()
		}
		var res any
		if rt.answer != nil {
			res, err = rt.answer(ctx, s, rt, actor, params)
		} else {
			res, err = rt.Op.Call(ctx, s.Service, actor, params)
		}
		// A partial result that comes with an error (an import that
		// stopped after some skills) is not shown: the error says what
		// was created before it.
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.reply(w, r, rt, res)
	})
}

// actor resolves the bearer token, and for workspace routes the workspace
// in the path. Which errors are possible, and that another tenant's
// workspace is "not found", is the service's business.
func (s *Server) actor(r *http.Request, rt Route) (service.Actor, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return service.Actor{}, unauthorized("missing token: send the header Authorization: Bearer <token>")
	}
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return service.Actor{}, unauthorized("the Authorization header must be Bearer <token>")
	}
	a, err := s.authenticate(r, token)
	if err != nil {
		return service.Actor{}, err
	}
	if rt.Workspace() {
		return s.Service.In(r.Context(), a, r.PathValue("ws"))
	}
	return a, nil
}

// existed is a result of a creating operation that may instead have
// found what it would have created (an install made before).
type existed interface{ AlreadyExisted() bool }

// A Responder is a result that writes its own answer, where JSON of the
// result is not the answer: a download, the A2A card, a task's log. The
// service's results know nothing of HTTP, so the routes wrap them in the
// small types of this package that implement it (see routeResult).
type Responder interface {
	// WriteResponse writes the answer. An error is one found before
	// anything was written; the handler writes it as the API's error.
	WriteResponse(w http.ResponseWriter, r *http.Request) error
}

// responderFunc makes a function a Responder, as http.HandlerFunc does a
// handler.
type responderFunc func(w http.ResponseWriter, r *http.Request) error

func (f responderFunc) WriteResponse(w http.ResponseWriter, r *http.Request) error { return f(w, r) }

// reply writes a successful result as the route says.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, rt Route, res any) {
	if rw, ok := res.(Responder); ok {
		if err := rw.WriteResponse(w, r); err != nil {
			s.writeError(w, r, err)
		}
		return
	}
	if e, ok := res.(existed); ok && rt.Status == http.StatusCreated && e.AlreadyExisted() {
		rt.Status = http.StatusOK
	}
	switch {
	case rt.Status == http.StatusNoContent || isNil(res):
		w.WriteHeader(rt.Status)
	case rt.Reply == ReplyOneOrMany:
		writeJSON(w, rt.Status, oneOrMany(res))
	default:
		writeJSON(w, rt.Status, res)
	}
}

// oneOrMany returns the only element of a result's Items, or the result.
func oneOrMany(res any) any {
	v := reflect.Indirect(reflect.ValueOf(res))
	if v.Kind() == reflect.Struct {
		if items := v.FieldByName("Items"); items.IsValid() && items.Kind() == reflect.Slice && items.Len() == 1 {
			return items.Index(0).Interface()
		}
	}
	return res
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return rv.IsNil()
	}
	return false
}

// writeJSON writes v as compact JSON. Indenting doubled the cost of
// encoding a page of 50 skills (docs/PERFORMANCE.md); people reading
// answers pipe them through jq or use the CLI.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	k, _ := v.(kept)
	var body []byte
	var err error
	if k != nil {
		body, err = k.Encoded("json", func() ([]byte, error) { return encodeJSON(v) })
	} else {
		body, err = encodeJSON(v)
	}
	if err != nil {
		// Results are plain data; this would be a bug, so say so.
		body = []byte(`{"error":{"code":"internal","message":"the answer could not be encoded"}}` + "\n")
		status, k = http.StatusInternalServerError, nil
	}
	writeBody(w, status, body, k)
}

// encodeJSON is the answer's bytes: v as compact JSON and a newline.
func encodeJSON(v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(body, '\n'), nil
}
