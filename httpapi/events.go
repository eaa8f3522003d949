package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/internal/streamlimit"
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
	// NextAfter and HasMore page through a log longer than one answer:
	// pass NextAfter as ?after= for the entries that follow.
	NextAfter int64 `json:"next_after" jsonschema:"the seq of the last entry answered (after when there is none): pass it as after for the next entries"`
	HasMore   bool  `json:"has_more" jsonschema:"true when the log holds entries after next_after; a running task may log more later either way"`
}

// Watcher signals new log entries of tasks run in this process; without
// one the stream polls.
type Watcher interface {
	Watch(taskID string) (<-chan struct{}, func())
}

// taskEventsReply answers a request for a task's log (tasks.events).
func taskEventsReply(s *Server, rt Route, actor service.Actor, p *service.TaskEventsParams) Responder {
	return responderFunc(func(w http.ResponseWriter, r *http.Request) error { return s.events(w, r, actor, rt, p) })
}

// events serves a task's log: with ?format=json one answer, otherwise a
// Server-Sent Events stream that starts after Last-Event-ID (or ?after),
// follows the task live, and ends when the task has finished and every
// entry was sent. It returns the errors found before anything is written.
func (s *Server) events(w http.ResponseWriter, r *http.Request, actor service.Actor, rt Route, p *service.TaskEventsParams) error {
	if p.Format != "" && p.Format != "json" && p.Format != "sse" {
		return badRequest("format", "format must be json or sse, not %q", p.Format)
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > p.After {
			p.After = n
		}
	}
	if p.Format == "json" {
		entries, err := s.Service.TaskEvents(r.Context(), actor, *p)
		if err != nil {
			return err
		}
		list := TaskEventList{Items: make([]agent.Event, 0, len(entries)), NextAfter: p.After}
		for _, e := range entries {
			ev, err := agent.EventOf(e.TaskID, e.Seq, e.CreatedAt, e.Kind, e.Payload)
			if err != nil {
				return err
			}
			list.Items = append(list.Items, ev)
			list.NextAfter = e.Seq
		}
		// Only a full answer can have more after it; one more small read
		// says whether it has, so that a log ending exactly at a page
		// boundary does not send the client after an empty page.
		if len(entries) == maxEntries(p.Limit) {
			next := *p
			next.After, next.Limit = list.NextAfter, 1
			more, err := s.Service.TaskEvents(r.Context(), actor, next)
			if err != nil {
				return err
			}
			list.HasMore = len(more) > 0
		}
		writeJSON(w, http.StatusOK, list)
		return nil
	}
	TaskStream{Service: s.Service, Watcher: s.Watcher, Named: true, Limiter: s.Streams,
		Authenticate: func() (service.Actor, error) { return s.actor(r, rt) },
		Refuse:       func(err error) { s.writeError(w, r, err) },
	}.Serve(w, r, actor, *p)
	return nil
}

// TaskStream writes a task's log as Server-Sent Events: the entries after
// p.After, then, live, every entry the task logs until it has finished and
// everything was sent. The API's events route and the web UI's task page
// both serve it.
type TaskStream struct {
	Service *service.Service
	// Watcher, when set, signals new entries of tasks run in this process;
	// without one the stream polls.
	Watcher Watcher
	// Named writes each entry's type as its "event:" line, as the API
	// does. Without it entries are unnamed messages (a browser's
	// EventSource listens to one name at a time; the data has the type)
	// and the stream ends with an "event: end" naming the final status,
	// so that the page's script closes instead of reconnecting.
	Named bool
	// Authenticate checks the caller again every eventRecheck: a stream
	// ends soon after its token is revoked or expires, with an "error"
	// event.
	Authenticate func() (service.Actor, error)
	// Refuse answers a refusal of the first read, which also checks
	// access before the answer becomes a stream, or of the Limiter.
	Refuse func(error)
	// Limiter, when set, bounds the streams open at once, per token and
	// in all, and ends them all, with a "shutdown" event, once it is
	// closed (the server is stopping).
	Limiter *streamlimit.Limiter
}

// ShutdownEvent is the name of the event a stream ends with when the
// server stops: its data is an ErrorObject (unavailable), and a retry
// field before it tells an EventSource when to reconnect.
const ShutdownEvent = "shutdown"

// Serve streams the log of task p.ID to w for actor.
func (ts TaskStream) Serve(w http.ResponseWriter, r *http.Request, actor service.Actor, p service.TaskEventsParams) {
	// Before anything is read: a refused stream costs no database work.
	release, err := ts.Limiter.Acquire(actor.TokenID)
	if err != nil {
		ts.Refuse(err)
		return
	}
	defer release()
	ctx := r.Context()
	closing := ts.Limiter.Done()
	var signal <-chan struct{}
	if ts.Watcher != nil {
		ch, stop := ts.Watcher.Watch(p.ID)
		defer stop()
		signal = ch
	}
	task, entries, err := ts.Service.TaskLog(ctx, actor, p)
	if err != nil {
		ts.Refuse(err)
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
			if ts.Named {
				fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, data)
			} else {
				fmt.Fprintf(w, "id: %d\ndata: %s\n\n", ev.Seq, data)
			}
			p.After = e.Seq
		}
		// TaskLog reads the status before the entries: a finished task's
		// log is complete, so nothing can follow what was just sent.
		full := len(entries) == maxEntries(p.Limit)
		if task.Status.Done() && !full {
			if !ts.Named {
				fmt.Fprintf(w, "event: end\ndata: {\"status\":%q}\n\n", task.Status)
			}
			rc.Flush()
			return
		}
		rc.Flush()
		next := waitNew
		if full {
			// A backlog longer than one read goes on at once, unless the
			// server is stopping.
			select {
			case <-closing:
				next = waitClosing
			default:
			}
		} else {
			next = wait(ctx, closing, signal, keepalive.C, w, rc)
		}
		switch next {
		case waitGone:
			return
		case waitClosing:
			ts.shutdown(w, rc)
			return
		}
		if time.Since(checked) >= eventRecheck {
			if actor, err = ts.Authenticate(); err != nil {
				data, _ := json.Marshal(ErrorObject{Code: skilld.ErrorCode(err), Message: skilld.ErrorMessage(err)})
				fmt.Fprintf(w, "event: error\ndata: %s\n\n", data)
				rc.Flush()
				return
			}
			checked = time.Now()
		}
		if task, entries, err = ts.Service.TaskLog(ctx, actor, p); err != nil {
			return
		}
	}
}

// shutdown ends a stream because the server is stopping: the client is to
// reconnect, after the last id it got, once the retry time has passed
// (an EventSource does so by itself; the CLI on the event).
func (ts TaskStream) shutdown(w http.ResponseWriter, rc *http.ResponseController) {
	data, _ := json.Marshal(ErrorObject{Code: skilld.EUNAVAILABLE,
		Message: "the server is shutting down; reconnect with Last-Event-ID to resume after the last event received"})
	fmt.Fprintf(w, "retry: %d\nevent: %s\ndata: %s\n\n", ts.Limiter.RetryAfter().Milliseconds(), ShutdownEvent, data)
	rc.Flush()
}

func maxEntries(limit int) int {
	if limit <= 0 || limit > 1000 {
		return 1000
	}
	return limit
}

// What wait saw.
const (
	waitNew     = iota // new entries may exist
	waitGone           // the client left
	waitClosing        // the server is stopping
)

// wait blocks until new entries may exist, the client leaves or the
// server stops.
func wait(ctx context.Context, closing, signal <-chan struct{}, keepalive <-chan time.Time, w http.ResponseWriter, rc *http.ResponseController) int {
	poll := time.NewTimer(eventPoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return waitGone
		case <-closing:
			return waitClosing
		case <-signal:
			return waitNew
		case <-poll.C:
			return waitNew
		case <-keepalive:
			fmt.Fprint(w, ": keepalive\n\n")
			rc.Flush()
		}
	}
}
