package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
)

// How tasks follow rides out a dropped event stream.
const (
	// followAttempts is how many times in a row following may fail to
	// get a new event before it gives up: with followBackoff's waits,
	// about a minute, enough for a server to restart.
	followAttempts = 10
	// followIdle: the server sends a keepalive every 15 s, so a stream
	// silent for this long has been dropped on the way without a word.
	followIdle = 45 * time.Second
)

// followBackoff is the wait before reconnection n (from 1): 0.5 s
// doubling, at most 8 s.
func followBackoff(n int) time.Duration {
	return min(500*time.Millisecond<<(n-1), 8*time.Second)
}

// follow shows a task's events as they happen, from the server's event
// stream, until the task has ended and every event was shown. A stream
// that drops is resumed after the last event shown (Last-Event-ID), so no
// event is shown twice or left out; each reconnection is said on stderr
// as it happens. It exits 0 when the task completed, 1 otherwise. verbose
// shows every line of every tool call.
func (c *apiCmd) follow(ctx context.Context, id string, verbose bool) int {
	p := newPrinter(c.e, c.json)
	p.taskID, p.verbose = id, verbose
	defer p.close()
	var last int64
	ended := false // a task.completed or task.failed event was shown
	show := func(ev agent.Event) {
		p.event(ev)
		ended = ended || ev.Type == agent.EventTaskCompleted || ev.Type == agent.EventTaskFailed
	}
	for failures := 0; ; {
		cl, err := c.client(ctx, service.OpTasksEvents.Operation)
		if err != nil {
			return c.fail(err)
		}
		seen, streamErr := c.stream(ctx, cl, id, last, show)
		if seen > last {
			last, failures = seen, 0
		}
		if ctx.Err() != nil {
			p.close()
			fmt.Fprintf(c.e.stderr, "stopped following task %s; it goes on (skilld tasks cancel %s stops it)\n", id, id)
			return exitFailure
		}
		if streamErr != nil && !transient(streamErr) {
			return c.fail(streamErr)
		}
		err = streamErr
		// The stream ended: because the task did, or on the way? A server
		// that said it is stopping is not asked: it is going away.
		if !errors.Is(streamErr, errServerStopping) {
			t, getErr := httpapi.Call(ctx, cl, service.OpTasksGet, service.GetTaskParams{TaskRef: service.TaskRef{ID: id}})
			switch {
			case getErr == nil && t.Status.Done() && t.LastSeq <= last:
				p.close()
				if !ended && !c.json {
					fmt.Fprintf(c.e.stdout, "✗ %s\n", describeEnd(t))
				}
				if t.Status != skilld.TaskCompleted {
					return exitFailure
				}
				return exitOK
			case getErr != nil && !transient(getErr):
				return c.fail(getErr)
			case getErr != nil:
				err = getErr
			}
		}
		failures++
		why := "the event stream ended early"
		if err != nil {
			why = skilld.ErrorMessage(err)
		}
		if failures >= followAttempts {
			p.close()
			fmt.Fprintf(c.e.stderr, "skilld: %s; gave up following task %s after %d attempts (skilld tasks follow %s resumes)\n", why, id, failures, id)
			return exitFailure
		}
		// A server that asked for a wait (Retry-After of a refused
		// stream, the retry of a stream it ended) gets it.
		wait := max(followBackoff(failures), retryWait(err))
		p.close()
		fmt.Fprintf(c.e.stderr, "%s; reconnecting in %s after event %d (attempt %d of %d)\n", why, wait, last, failures+1, followAttempts)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// errServerStopping marks a stream the server ended because it is
// shutting down (its "shutdown" event): following resumes once it, or
// another server, answers again.
var errServerStopping = errors.New("the server is shutting down")

// maxRetryWait bounds what a server may ask a follower to wait.
const maxRetryWait = 30 * time.Second

// retryWait is the wait err's "retry_after" detail asks for, in seconds,
// or 0.
func retryWait(err error) time.Duration {
	for _, d := range skilld.ErrorDetails(err) {
		if d.Field != "retry_after" {
			continue
		}
		if n, perr := strconv.ParseFloat(d.Message, 64); perr == nil && n > 0 {
			return min(time.Duration(n*float64(time.Second)), maxRetryWait)
		}
	}
	return 0
}

// transient reports whether following may succeed if tried again: the
// server could not be reached or was busy.
func transient(err error) bool {
	switch skilld.ErrorCode(err) {
	case skilld.EUNAVAILABLE, skilld.ERATELIMITED:
		return true
	}
	return false
}

// describeEnd says how a task ended, for a stream that showed no end
// event (a task cancelled before it ran).
func describeEnd(t *skilld.Task) string {
	if t.Error != nil {
		return fmt.Sprintf("%s: %s", t.Status, t.Error.Message)
	}
	return string(t.Status)
}

// stream reads the task's event stream once, from after event after,
// handing each new event to show. It returns the last event's sequence
// number, and why the stream ended early (nil for a stream the server
// ended).
func (c *apiCmd) stream(ctx context.Context, cl *httpapi.Client, id string, after int64, show func(agent.Event)) (int64, error) {
	rt, _ := httpapi.RouteFor(service.OpTasksEvents.Operation)
	path := strings.NewReplacer("{ws}", url.PathEscape(cl.Workspace), "{id}", url.PathEscape(id)).Replace(rt.Pattern)
	// The stream lives as long as the task; silence for followIdle ends
	// it, as a dropped connection that never said so.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errIdle := fmt.Errorf("nothing arrived for %s", followIdle)
	idle := time.AfterFunc(followIdle, func() { cancel(errIdle) })
	defer idle.Stop()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.server, "/")+path, nil)
	if err != nil {
		return after, skilld.Errorf(skilld.EINVALID, "bad server URL %q: %v", c.server, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "text/event-stream")
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(context.Cause(ctx), errIdle) {
			err = errIdle
		}
		return after, &skilld.Error{Code: skilld.EUNAVAILABLE, Message: fmt.Sprintf("cannot reach the server at %s: %v", c.server, unwrapURL(err)), Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return after, streamRefusal(resp)
	}
	r := bufio.NewReader(resp.Body)
	var event, retry string
	var data strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" {
				return after, nil
			}
			if errors.Is(context.Cause(ctx), errIdle) {
				err = errIdle
			}
			return after, &skilld.Error{Code: skilld.EUNAVAILABLE, Message: fmt.Sprintf("the event stream broke off: %v", err), Err: err}
		}
		idle.Reset(followIdle)
		line = strings.TrimRight(line, "\r\n")
		if line == "" { // the end of one event
			if data.Len() > 0 {
				switch event {
				case "error":
					return after, eventError(data.String())
				case httpapi.ShutdownEvent:
					return after, shutdownError(retry)
				}
				ev, err := decodeEvent([]byte(data.String()))
				if err != nil {
					return after, skilld.Errorf(skilld.EUNAVAILABLE, "the event stream sent an event that is not JSON: %v", err)
				}
				if ev.Seq > after { // never one already shown
					show(ev)
					after = ev.Seq
				}
			}
			event = ""
			data.Reset()
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		case "retry":
			retry = value
		}
		// "id" repeats the event's seq, which the data carries; lines
		// starting with ":" are keepalives.
	}
}

// decodeEvent reads an event as the stream sends it.
func decodeEvent(b []byte) (agent.Event, error) {
	var ev agent.Event
	err := json.Unmarshal(b, &ev)
	return ev, err
}

// streamRefusal reads the server's error answer to a stream request.
func streamRefusal(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body httpapi.ErrorBody
	if json.Unmarshal(b, &body) == nil && body.Error.Code != "" {
		return &skilld.Error{Code: body.Error.Code, Message: body.Error.Message, Details: body.Error.Details}
	}
	code := skilld.EINVALID
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		code = skilld.EUNAVAILABLE
	}
	return &skilld.Error{Code: code, Message: "the server answered " + resp.Status}
}

// eventError is the error event a stream ends with when its token stops
// being valid.
func eventError(data string) error {
	var e struct{ Code, Message string }
	if json.Unmarshal([]byte(data), &e) != nil || e.Code == "" {
		return skilld.Errorf(skilld.EUNAVAILABLE, "the event stream ended with an error: %s", data)
	}
	return &skilld.Error{Code: e.Code, Message: e.Message}
}

// shutdownError is the "shutdown" event a stream ends with when its
// server stops, with the wait its retry field (milliseconds) asks for as
// a retry_after detail. The event's message tells API clients what to do,
// which following does by itself, so it is not repeated.
func shutdownError(retry string) error {
	err := &skilld.Error{Code: skilld.EUNAVAILABLE, Message: errServerStopping.Error(), Err: errServerStopping}
	if ms, perr := strconv.ParseInt(retry, 10, 64); perr == nil && ms > 0 {
		err.Details = []skilld.Detail{{Field: "retry_after", Message: strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)}}
	}
	return err
}

// unwrapURL returns the cause inside a *url.Error.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
