package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/skilld/skilld"
	"net/http"
	"strconv"
	"time"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/service"
)

// Timings of the event stream.
const (
	// eventPoll is how often the stream re-reads the log when nothing
	// signals new entries (another server process runs the task).
	eventPoll = 500 * time.Millisecond
	// eventKeepalive keeps proxies from closing an idle stream.
	eventKeepalive = 15 * time.Second
	// eventRecheck is how often a stream checks its token again.
	eventRecheck = 2 * time.Second
)

// TaskEventList is the answer of GET …/tasks/{id}/events?format=json: the
// task's log entries as the stream shows them. It is a type, not a map, so
// that the OpenAPI document describes what is written.
type TaskEventList struct {
	Items []agent.Event `json:"items"`
}

// Watcher signals new log entries of tasks run in this process; without
// one the stream polls.
type Watcher interface {
	Watch(taskID string) (<-chan struct{}, func())
}

// events serves a task's log: with ?format=json one answer, otherwise a
// Server-Sent Events stream that starts after Last-Event-ID (or ?after),
// follows the task live, and ends when the task has finished and every
// entry was sent.
func (s *Server) events(w http.ResponseWriter, r *http.Request, actor service.Actor, rt Route, p *service.TaskEventsParams) {
	if p.Format != "" && p.Format != "json" && p.Format != "sse" {
		s.writeError(w, r, badRequest("format", "format must be json or sse, not %q", p.Format))
		return
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > p.After {
			p.After = n
		}
	}
	if p.Format == "json" {
		entries, err := s.Service.TaskEvents(r.Context(), actor, *p)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := make([]agent.Event, 0, len(entries))
		for _, e := range entries {
			ev, err := agent.EventOf(e.TaskID, e.Seq, e.CreatedAt, e.Kind, e.Payload)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			out = append(out, ev)
		}
		writeJSON(w, http.StatusOK, TaskEventList{Items: out})
		return
	}
	ctx := r.Context()
	var signal <-chan struct{}
	if s.Watcher != nil {
		ch, stop := s.Watcher.Watch(p.ID)
		defer stop()
		signal = ch
	}
	// The first read also checks access, before the answer becomes a
	// stream, so refusals are normal JSON errors.
	task, entries, err := s.Service.TaskLog(ctx, actor, *p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return // the connection cannot stream; nothing more to say on it
	}
	// Streams outlive the server's write timeout by design.
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
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, data)
			p.After = e.Seq
		}
		rc.Flush()
		// TaskLog reads the status before the entries: a finished task's
		// log is complete, so nothing can follow what was just sent.
		full := len(entries) == maxEntries(p.Limit)
		if task.Status.Done() && !full {
			return
		}
		if !full && !wait(ctx, signal, keepalive.C, w, rc) {
			return
		}
		// The token is checked again every few seconds: a stream ends
		// soon after its token is revoked or expires.
		if time.Since(checked) >= eventRecheck {
			if actor, err = s.actor(r, rt); err != nil {
				data, _ := json.Marshal(ErrorObject{Code: skilld.ErrorCode(err), Message: skilld.ErrorMessage(err)})
				fmt.Fprintf(w, "event: error\ndata: %s\n\n", data)
				rc.Flush()
				return
			}
			checked = time.Now()
		}
		if task, entries, err = s.Service.TaskLog(ctx, actor, *p); err != nil {
			return
		}
	}
}

func maxEntries(limit int) int {
	if limit <= 0 || limit > 1000 {
		return 1000
	}
	return limit
}

// wait blocks until new entries may exist; false when the client left.
func wait(ctx context.Context, signal <-chan struct{}, keepalive <-chan time.Time, w http.ResponseWriter, rc *http.ResponseController) bool {
	poll := time.NewTimer(eventPoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
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
