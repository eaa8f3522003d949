package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/service"
)

// Timings of the task page's event stream, those of the API's stream
// (httpapi/events.go).
const (
	eventPoll      = 500 * time.Millisecond
	eventKeepalive = 15 * time.Second
	eventRecheck   = 2 * time.Second
	// maxEntries is what one TaskLog read returns at most.
	maxEntries = 1000
)

// taskEvents relays a task's log as Server-Sent Events for the task
// page's script: the API's stream (same reads through service.TaskLog,
// same event encoding, same token recheck), authenticated by the session
// cookie instead of a bearer header, which EventSource cannot send. It
// ends with an "end" event once the task is done, so the script closes
// instead of reconnecting.
func (ui *UI) taskEvents(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
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
	var signal <-chan struct{}
	if ui.opts.Watcher != nil {
		ch, stop := ui.opts.Watcher.Watch(p.ID)
		defer stop()
		signal = ch
	}
	// The first read checks access before the answer becomes a stream,
	// so another workspace's task is a normal 404 page.
	task, entries, err := ui.svc.TaskLog(ctx, s.actor, p)
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	rc.SetWriteDeadline(time.Time{})
	keepalive := time.NewTicker(eventKeepalive)
	defer keepalive.Stop()
	checked := time.Now()
	for {
		for _, e := range entries {
			ev, err := agent.EventOf(e.TaskID, e.Seq, e.CreatedAt, e.Kind, e.Payload)
			if err != nil {
				return
			}
			data, _ := json.Marshal(ev)
			// No event: line, unlike the API: EventSource can only listen
			// to named events one name at a time, and the data carries
			// the type anyway.
			fmt.Fprintf(w, "id: %d\ndata: %s\n\n", ev.Seq, data)
			p.After = e.Seq
		}
		full := len(entries) == maxEntries
		if task.Status.Done() && !full {
			fmt.Fprintf(w, "event: end\ndata: {\"status\":%q}\n\n", task.Status)
			rc.Flush()
			return
		}
		rc.Flush()
		if !full && !wait(r, signal, keepalive.C, w, rc) {
			return
		}
		if time.Since(checked) >= eventRecheck {
			if s, err = ui.authenticate(r); err != nil {
				data, _ := json.Marshal(map[string]string{"code": skilld.ErrorCode(err), "message": skilld.ErrorMessage(err)})
				fmt.Fprintf(w, "event: error\ndata: %s\n\n", data)
				rc.Flush()
				return
			}
			checked = time.Now()
		}
		if task, entries, err = ui.svc.TaskLog(ctx, s.actor, p); err != nil {
			return
		}
	}
}

// wait blocks until new entries may exist; false when the client left.
func wait(r *http.Request, signal <-chan struct{}, keepalive <-chan time.Time, w http.ResponseWriter, rc *http.ResponseController) bool {
	poll := time.NewTimer(eventPoll)
	defer poll.Stop()
	for {
		select {
		case <-r.Context().Done():
			return false
		case <-signal:
			return true
		case <-poll.C:
			return true
		case <-keepalive:
			fmt.Fprint(w, ": keepalive\n\n")
			rc.Flush()
		}
	}
}
