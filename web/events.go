package web

import (
	"net/http"
	"strconv"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
)

// taskEvents relays a task's log as Server-Sent Events for the task
// page's script: the API's stream itself (httpapi.TaskStream), without
// event names and ending with an "end" event, authenticated by the
// session cookie instead of a bearer header, which EventSource cannot
// send.
func (ui *UI) taskEvents(w http.ResponseWriter, r *http.Request, s *session) {
	p := service.TaskEventsParams{TaskRef: service.TaskRef{ID: r.PathValue("id")}}
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			ui.fail(w, r, s, skilld.Errorf(skilld.EINVALID, "after must be a sequence number, not %q", v))
			return
		}
		p.After = n
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > p.After {
			p.After = n
		}
	}
	stream := httpapi.TaskStream{Service: ui.svc, Watcher: ui.opts.Watcher, Limiter: ui.opts.Streams,
		Authenticate: func() (service.Actor, error) {
			s, err := ui.authenticate(r)
			if err != nil {
				return service.Actor{}, err
			}
			return s.actor, nil
		},
		// Another workspace's task is a normal 404 page; a stream over
		// its limit says when to come back, as the API's does.
		Refuse: func(err error) {
			if after := httpapi.RetryAfterOf(err); after != "" {
				w.Header().Set("Retry-After", after)
			}
			ui.fail(w, r, s, err)
		},
	}
	stream.Serve(w, r, s.actor, p)
}
