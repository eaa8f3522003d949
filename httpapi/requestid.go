package httpapi

import (
	"context"
	"log/slog"
	"net/http"
)

// MaxRequestIDLen bounds an incoming X-Request-Id the server adopts: long
// enough for a UUID or a proxy's trace id, short enough to keep log lines
// small.
const MaxRequestIDLen = 64

// requestIDFrom returns the request's incoming X-Request-Id when it is
// sane (1 to MaxRequestIDLen letters, digits, '-', '_', '.', ':'), so a
// proxy's id follows the request through our logs; otherwise a new one.
// Anything else is replaced rather than escaped: it would go into log
// lines and a response header.
func requestIDFrom(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); saneRequestID(id) {
		return id
	}
	return newRequestID()
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// RequestIDFromContext returns the id of the request ctx belongs to, or "".
func RequestIDFromContext(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ContextWithRequestID returns ctx carrying a request id, for work done on
// behalf of a request outside its handler.
func ContextWithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// NewLogHandler wraps h so that every record logged with a request's
// context carries request_id, without each call site passing it. A record
// that names request_id itself keeps its own.
func NewLogHandler(h slog.Handler) slog.Handler { return requestIDHandler{h} }

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestIDFromContext(ctx); id != "" {
		has := false
		r.Attrs(func(a slog.Attr) bool {
			has = a.Key == "request_id"
			return !has
		})
		if !has {
			r = r.Clone()
			r.AddAttrs(slog.String("request_id", id))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
