package httpapi_test

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/skilld/skilld/httpapi"
)

// contract holds the served OpenAPI document, built into a validator once
// per test binary: every request the tests send through testEnv.request,
// and every answer they get, is checked against it (checkExchange).
type contract struct {
	raw       []byte       // the document as served
	doc       openAPIDoc   // its JSON, for what the validator does not expose
	model     *v3.Document // its libopenapi model
	validator validator.Validator
	schemas   schema_validation.SchemaValidator
	routes    *http.ServeMux // the route table, to tell which route a request hits
	err       error          // why the contract could not be built
}

// openAPIDoc is the part of the document the checks read themselves.
type openAPIDoc struct {
	Paths map[string]map[string]struct {
		Responses map[string]struct {
			Content map[string]struct {
				EventData map[string]struct {
					Ref string `json:"$ref"`
				} `json:"x-skilld-event-data"`
			} `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
}

var (
	contractOnce sync.Once
	theContract  *contract
)

// apiContract returns the contract, building it on first use.
func apiContract() *contract {
	contractOnce.Do(func() { theContract = buildContract() })
	return theContract
}

func buildContract() *contract {
	c := &contract{routes: http.NewServeMux()}
	// The document exactly as a server serves it.
	h := (&httpapi.Server{Version: "test", Logger: slog.New(slog.DiscardHandler)}).Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", httpapi.OpenAPIPath, nil))
	if rec.Code != http.StatusOK {
		c.err = fmt.Errorf("GET %s: status %d", httpapi.OpenAPIPath, rec.Code)
		return c
	}
	c.raw = rec.Body.Bytes()
	if err := json.Unmarshal(c.raw, &c.doc); err != nil {
		c.err = fmt.Errorf("the document is not JSON: %w", err)
		return c
	}
	doc, err := libopenapi.NewDocument(c.raw)
	if err != nil {
		c.err = fmt.Errorf("libopenapi: %w", err)
		return c
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		c.err = fmt.Errorf("libopenapi: building the model: %w", err)
		return c
	}
	c.model = &m.Model
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		c.err = fmt.Errorf("libopenapi-validator: %v", errs)
		return c
	}
	c.validator = v
	c.schemas = schema_validation.NewSchemaValidatorWithLogger(slog.New(slog.DiscardHandler))
	for _, rt := range httpapi.Routes() {
		c.routes.HandleFunc(rt.Method+" "+rt.Pattern, func(http.ResponseWriter, *http.Request) {})
	}
	return c
}

// exchange is one request a test sent and the answer it got.
type exchange struct {
	method, target string // target is the path and query
	reqHeader      http.Header
	reqBody        []byte
	status         int
	respHeader     http.Header
	respBody       []byte
}

// Paths served beside the route table that the document leaves out on
// purpose (docs/API.md says why): the metrics scrape and the MCP endpoint.
var undocumented = []string{httpapi.MetricsPath, "/mcp"}

// checkExchange returns what is wrong with an exchange by the document,
// each problem naming the route and status; nil when nothing is.
func (c *contract) checkExchange(x exchange) []string {
	if c.err != nil {
		return []string{"the OpenAPI contract could not be built: " + c.err.Error()}
	}
	u, err := url.Parse(x.target)
	if err != nil {
		return []string{fmt.Sprintf("%s %s: not a URL: %v", x.method, x.target, err)}
	}
	// The token-less discovery routes serve the workspace "default"'s
	// index and archives, as its documented routes do.
	// Their requests need no token, so only the answer is checked.
	public := false
	if rest, ok := strings.CutPrefix(u.Path, "/.well-known/agent-skills/"); ok {
		u.Path = "/v1/workspaces/default/.well-known/agent-skills/" + rest
		u.RawPath = ""
		public = true
	}
	_, pattern := c.routes.Handler(&http.Request{Method: x.method, URL: u, Host: "skilld.test"})
	if pattern == "" {
		return c.checkOffTable(x, u)
	}
	_, pattern, _ = strings.Cut(pattern, " ")
	template := strings.ReplaceAll(pattern, "...}", "}")
	name := fmt.Sprintf("%s %s → %d", x.method, template, x.status)

	req, resp, err := c.rebuild(x, u, pattern)
	if err != nil {
		return []string{name + ": " + err.Error()}
	}
	var problems []string
	if _, reqErrs := c.validator.ValidateHttpRequest(req); len(reqErrs) > 0 && x.status < 400 && !public {
		problems = append(problems, fmt.Sprintf("%s: the server accepted a request the document refuses: %s", name, describe(reqErrs)))
	}
	if _, respErrs := c.validator.ValidateHttpResponse(req, resp); len(respErrs) > 0 {
		problems = append(problems, fmt.Sprintf("%s: the answer breaks the document: %s", name, describe(respErrs)))
	}
	op := c.doc.Paths[template][strings.ToLower(x.method)]
	if _, ok := op.Responses[strconv.Itoa(x.status)]; !ok && x.status < 400 {
		// The default response is for errors: a success must be
		// listed by its status.
		problems = append(problems, fmt.Sprintf("%s: status %d is not a documented answer of the route", name, x.status))
	}
	if mt, _, _ := strings.Cut(x.respHeader.Get("Content-Type"), ";"); mt == "text/event-stream" {
		problems = append(problems, c.checkEventStream(name, x.respBody, op.Responses[strconv.Itoa(x.status)].Content[mt].EventData)...)
	}
	return problems
}

// checkOffTable checks an exchange on a path outside the route table: the
// server's own 404, 405 or 400 (an unclean path), which must be the
// documented error body, unless the path is served beside the API.
func (c *contract) checkOffTable(x exchange, u *url.URL) []string {
	for _, p := range undocumented {
		if u.Path == p || strings.HasPrefix(u.Path, p+"/") {
			return nil
		}
	}
	name := fmt.Sprintf("%s %s (no route) → %d", x.method, u.Path, x.status)
	switch x.status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusBadRequest:
	default:
		return []string{name + ": a path outside the route table must answer 404, 405 or 400"}
	}
	if errs := c.validateComponent("Error", body(x)); len(errs) > 0 {
		return []string{name + ": the error body breaks the Error schema: " + describe(errs)}
	}
	return nil
}

// rebuild makes the request and response the validator reads. A
// {name...} wildcard matches the rest of the path, slashes included,
// which an OpenAPI path parameter cannot: the slashes in it are escaped so
// that the parameter is one segment, as the document describes it.
func (c *contract) rebuild(x exchange, u *url.URL, pattern string) (*http.Request, *http.Response, error) {
	path := u.EscapedPath()
	segs := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	if last := segs[len(segs)-1]; strings.HasSuffix(last, "...}") {
		parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
		if len(parts) >= len(segs) {
			path = "/" + strings.Join(append(parts[:len(segs)-1:len(segs)-1], strings.Join(parts[len(segs)-1:], "%2F")), "/")
		}
	}
	target := "http://skilld.test" + path
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	req, err := http.NewRequest(x.method, target, bytes.NewReader(x.reqBody))
	if err != nil {
		return nil, nil, err
	}
	req.Header = x.reqHeader.Clone()
	if len(x.reqBody) > 0 && req.Header.Get("Content-Type") == "" {
		// RFC 9110, 8.3: a body without a type may be taken as
		// application/octet-stream, and the server does so.
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	resp := &http.Response{StatusCode: x.status, Header: x.respHeader.Clone(), Request: req}
	data := body(x)
	if data == nil {
		return nil, nil, fmt.Errorf("the gzip-encoded body does not decompress")
	}
	resp.Header.Del("Content-Encoding")
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return req, resp, nil
}

// body is the answer's body as its content, undoing a gzip encoding the
// test asked for (the HTTP client undoes the one it asked for itself);
// nil when it does not decompress.
func body(x exchange) []byte {
	if !strings.EqualFold(x.respHeader.Get("Content-Encoding"), "gzip") {
		return x.respBody
	}
	zr, err := gzip.NewReader(bytes.NewReader(x.respBody))
	if err != nil {
		return nil
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil
	}
	return data
}

// checkEventStream checks a Server-Sent Events answer: every event's data
// against the schema the document names for its event name, and that the
// id and name of an entry's event are its seq and type.
func (c *contract) checkEventStream(name string, stream []byte, eventData map[string]struct {
	Ref string `json:"$ref"`
}) []string {
	if len(eventData) == 0 {
		return []string{name + ": the event stream's media type does not name the schema of its events' data (x-skilld-event-data)"}
	}
	var problems []string
	for i, ev := range parseSSE(stream) {
		if ev.data == "" {
			problems = append(problems, fmt.Sprintf("%s: event %d (%q) has no data", name, i+1, ev.name))
			continue
		}
		schemaRef, ok := eventData[ev.name]
		if !ok {
			schemaRef, ok = eventData["*"]
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: event %d is named %q, which the document does not describe", name, i+1, ev.name))
			continue
		}
		component := strings.TrimPrefix(schemaRef.Ref, "#/components/schemas/")
		if errs := c.validateComponent(component, []byte(ev.data)); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("%s: event %d (%q) breaks %s: %s", name, i+1, ev.name, component, describe(errs)))
			continue
		}
		if _, named := eventData[ev.name]; named {
			continue
		}
		var entry struct {
			Type string `json:"type"`
			Seq  int64  `json:"seq"`
		}
		json.Unmarshal([]byte(ev.data), &entry)
		if ev.name != entry.Type || ev.id != strconv.FormatInt(entry.Seq, 10) {
			problems = append(problems, fmt.Sprintf("%s: event %d is id %q, name %q, but its entry is seq %d, type %q", name, i+1, ev.id, ev.name, entry.Seq, entry.Type))
		}
	}
	return problems
}

// validateComponent validates JSON against a schema of the document's
// components.
func (c *contract) validateComponent(name string, data []byte) []*errors.ValidationError {
	proxy := c.model.Components.Schemas.GetOrZero(name)
	if proxy == nil {
		return []*errors.ValidationError{{Message: "no component schema " + name}}
	}
	_, errs := c.schemas.ValidateSchemaBytes(proxy.Schema(), data)
	return errs
}

// sseEvent is one event of a Server-Sent Events stream.
type sseEvent struct{ id, name, data string }

// parseSSE reads the events of a stream (comment lines are keepalives).
func parseSSE(stream []byte) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if cur.name != "" || len(data) > 0 {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = sseEvent{}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			cur.id = value
		case "event":
			cur.name = value
		case "data":
			data = append(data, value)
		}
	}
	return out
}

// describe renders validation errors for a test failure: what failed,
// why, and where in the body.
func describe(errs []*errors.ValidationError) string {
	var parts []string
	for _, e := range errs {
		s := e.Message
		if e.Reason != "" && e.Reason != e.Message {
			s += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			s += fmt.Sprintf(" [%s: %s]", cmp.Or(f.FieldPath, "$"), f.Reason)
		}
		parts = append(parts, s)
	}
	slices.Sort(parts)
	return strings.Join(slices.Compact(parts), "; ")
}
