package httpapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/interop/a2acard"
	"github.com/skilld/skilld/service"
)

// OpenAPI returns the OpenAPI 3.1 document of the API, generated from the
// route table and the Go types the handlers decode and encode, so it
// cannot drift from what the server accepts and returns. The package's
// tests hold it to that: the document is validated against the OpenAPI
// 3.1 specification, and every request and response of the tests against
// the document.
func OpenAPI(version string) (map[string]any, error) {
	g, err := newSchemaGen()
	if err != nil {
		return nil, err
	}
	if _, err := g.component(reflect.TypeFor[ErrorBody]()); err != nil {
		return nil, err
	}
	g.schemas["Health"] = healthSchema()
	g.schemas["AgentCard"] = agentCardSchema()
	paths := map[string]map[string]any{}
	for _, rt := range Routes() {
		ops, err := g.operations(rt)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s %s: %w", rt.Method, rt.Pattern, err)
		}
		p := strings.ReplaceAll(rt.Pattern, "...}", "}")
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		maps.Copy(paths[p], ops)
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "skilld API",
			"version":     version,
			"description": "Agent Skills server: workspaces, skills and their versions, the catalog, install policy, agents and their tasks. See docs/API.md.",
		},
		"security": []any{map[string]any{"bearerAuth": []string{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas": g.schemas,
			"securitySchemes": map[string]any{
				"bearerAuth": map[string]any{"type": "http", "scheme": "bearer",
					"description": "An API token (skd_…); POST /v1/workspaces/{ws}/tokens creates one."},
			},
			"responses": map[string]any{
				"Error": map[string]any{
					"description": "An error: the status follows the code (see docs/API.md).",
					"content":     jsonContent(ref("Error")),
				},
				"Unauthorized": map[string]any{
					"description": "No usable token: missing, malformed, unknown, revoked or expired.",
					"headers": map[string]any{"WWW-Authenticate": map[string]any{"required": true,
						"schema": map[string]any{"type": "string", "const": `Bearer realm="skilld"`}}},
					"content": jsonContent(ref("Error")),
				},
				"Unavailable": map[string]any{
					"description": "Storage or a backend is briefly out, the server reads too many bodies or holds too many event streams at once, " +
						"or it is shutting down: retry after Retry-After seconds.",
					"headers": map[string]any{"Retry-After": map[string]any{"required": true,
						"schema": map[string]any{"type": "string"}, "description": "seconds, or an HTTP date"}},
					"content": jsonContent(ref("Error")),
				},
			},
		},
	}, nil
}

// openAPIHandler serves the document, built on its first request: it is
// the largest thing the server would otherwise build before it listens.
func (s *Server) openAPIHandler() http.Handler {
	body := sync.OnceValues(func() ([]byte, error) {
		doc, err := OpenAPI(s.Version)
		if err != nil {
			return nil, err
		}
		return json.MarshalIndent(doc, "", "  ")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := body()
		if err != nil {
			// A Go type the schema generator cannot describe: a bug, found
			// by the tests.
			panic(err)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(b)
	})
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func jsonContent(schema any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

// errorResponses are the error answers every operation may give: the
// statuses whose headers are fixed, and any other through the default.
func errorResponses(resp map[string]any) {
	resp["401"] = map[string]any{"$ref": "#/components/responses/Unauthorized"}
	resp["503"] = map[string]any{"$ref": "#/components/responses/Unavailable"}
	resp["default"] = map[string]any{"$ref": "#/components/responses/Error"}
}

// operations returns the operations of one route by lower-case method: the
// route's own, and HEAD beside the GET of a download.
func (g *schemaGen) operations(rt Route) (map[string]any, error) {
	method := strings.ToLower(rt.Method)
	if rt.Role == RolePublic {
		return map[string]any{method: publicOperation(rt)}, nil
	}
	out, err := g.operation(rt, rt.Op)
	if err != nil {
		return nil, err
	}
	ops := map[string]any{method: out}
	if head := headOperation(rt, rt.Op, out); head != nil {
		ops["head"] = head
	}
	return ops, nil
}

// publicOperation describes the two routes that are not operations.
func publicOperation(rt Route) map[string]any {
	resp := map[string]any{"default": map[string]any{"$ref": "#/components/responses/Error"}}
	out := map[string]any{"security": []any{}, "responses": resp}
	switch rt.Pattern {
	case HealthPath:
		out["summary"] = "Health of the server and its storage"
		out["operationId"] = "health"
		resp["200"] = map[string]any{"description": "the storage answers", "content": jsonContent(ref("Health"))}
		resp["503"] = map[string]any{"description": "a backend does not answer; checks names it", "content": jsonContent(ref("Health"))}
	case OpenAPIPath:
		out["summary"] = "This document"
		out["operationId"] = "openapi"
		resp["200"] = map[string]any{"description": "the OpenAPI 3.1 document of the API", "content": jsonContent(map[string]any{
			"type": "object", "required": []string{"openapi", "info", "paths"}, "description": "an OpenAPI 3.1 document"})}
	}
	return out
}

func (g *schemaGen) operation(rt Route, op service.Operation) (map[string]any, error) {
	resp := map[string]any{}
	out := map[string]any{"responses": resp}
	tag, _, _ := strings.Cut(op.Name, ".")
	out["operationId"] = op.Name
	out["summary"] = op.Summary
	out["tags"] = []string{tag}
	out["description"] = "Needs: " + roleText[rt.Role] + "."
	out["x-skilld-role"] = rt.Role
	fields := paramFields(op.Params, rt.Body)
	params, err := g.parameters(rt, fields)
	if err != nil {
		return nil, err
	}
	if len(params) > 0 {
		out["parameters"] = params
	}
	if body, err := g.requestBody(rt, op.Params, fields); err != nil {
		return nil, err
	} else if body != nil {
		out["requestBody"] = body
	}
	if err := g.success(rt, op, resp); err != nil {
		return nil, err
	}
	errorResponses(resp)
	return out, nil
}

// headOperation is HEAD of a download: the GET's headers without the
// bytes, so a client can learn a file's size and digest. Other GET routes
// answer HEAD too (net/http does), but there it says nothing a GET would
// not.
func headOperation(rt Route, op service.Operation, get map[string]any) map[string]any {
	if rt.Reply != ReplyFile && rt.Reply != ReplyArchive {
		return nil
	}
	head := maps.Clone(get)
	head["operationId"] = op.Name + ".head"
	head["summary"] = op.Summary + ": the headers only"
	resp := map[string]any{}
	for code, r := range get["responses"].(map[string]any) {
		if m, ok := r.(map[string]any); ok && code == "200" {
			m = maps.Clone(m)
			delete(m, "content")
			r = m
		}
		resp[code] = r
	}
	head["responses"] = resp
	return head
}

var roleText = map[string]string{
	RoleViewer:   "any token of the workspace (viewer, member or admin)",
	RoleMember:   "a member or admin token of the workspace",
	RoleAdmin:    "an admin token of the workspace",
	RoleInstance: "an instance-admin token",
}

func (g *schemaGen) parameters(rt Route, fields []field) ([]any, error) {
	var out []any
	if rt.Workspace() {
		out = append(out, map[string]any{"name": "ws", "in": "path", "required": true,
			"description": "the workspace's ID or name", "schema": map[string]any{"type": "string"}})
	}
	for _, f := range fields {
		if f.in != inPath && f.in != inQuery {
			continue
		}
		// A parameter is never null: a pointer field is one that may be
		// absent.
		s, err := g.schema(derefType(f.typ))
		if err != nil {
			return nil, err
		}
		p := map[string]any{"name": f.name, "in": map[fieldIn]string{inPath: "path", inQuery: "query"}[f.in], "schema": s}
		if f.desc != "" {
			p["description"] = f.desc
		}
		if f.in == inPath {
			p["required"] = true
			if strings.Contains(rt.Pattern, "{"+f.name+"...}") {
				p["description"] = strings.TrimPrefix(f.desc+"; ", "; ") + "the rest of the URL path, slashes included (sent unescaped)"
			}
		}
		out = append(out, p)
	}
	switch {
	case rt.Reply == ReplyFile || rt.Reply == ReplyArchive:
		out = append(out, map[string]any{"name": "If-None-Match", "in": "header", "schema": map[string]any{"type": "string"},
			"description": "an ETag from an earlier answer: 304 without the bytes when it still matches"})
	case rt.Reply == ReplyEvents:
		out = append(out, map[string]any{"name": "Last-Event-ID", "in": "header", "schema": map[string]any{"type": "string"},
			"description": "the id of the last event received: the stream resumes after it (like ?after)"})
	}
	return out, nil
}

func (g *schemaGen) requestBody(rt Route, params reflect.Type, fields []field) (map[string]any, error) {
	switch rt.Body {
	case BodyJSON:
		s, err := g.schema(params)
		if err != nil {
			return nil, err
		}
		// The fields that travel in the URL are not in the body: the
		// schema knows them by their JSON names.
		for _, f := range fields {
			if f.in != inBody {
				delete(s.Properties, f.json)
				s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(n string) bool { return n == f.json })
			}
		}
		decodedSchema(s)
		// The body is read as JSON whatever its Content-Type says (curl's
		// default form type included), so every type is listed.
		content := jsonContent(s)
		content["*/*"] = map[string]any{"schema": s}
		return map[string]any{"required": false, "content": content,
			"description": fmt.Sprintf("a JSON object of at most %s, whatever the Content-Type; an empty body is an empty object", formatMiB(MaxJSONBody))}, nil
	case BodyArchive:
		form := map[string]any{uploadFormField: map[string]any{"type": "string", "contentMediaType": "application/octet-stream",
			"description": "the zip, tar or tar.gz archive"}}
		for _, f := range fields {
			if f.in == inQuery {
				s, err := g.schema(derefType(f.typ))
				if err != nil {
					return nil, err
				}
				s.Description = f.desc
				form[f.name] = s
			}
		}
		content := map[string]any{"multipart/form-data": map[string]any{"schema": map[string]any{
			"type": "object", "required": []string{uploadFormField}, "properties": form, "additionalProperties": false}}}
		for _, t := range slices.Sorted(maps.Keys(archiveTypes)) {
			content[t] = map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": t}}
		}
		return map[string]any{"required": true, "content": content,
			"description": fmt.Sprintf("the archive as the raw body (no Content-Type is application/octet-stream) or the multipart field %q; "+
				"the archive's format is recognized by its bytes; at most %s", uploadFormField, formatMiB(MaxArchiveBody))}, nil
	}
	return nil, nil
}

// success adds the answers of a success to resp, following reply: the
// generator and the handler decide in the same order.
func (g *schemaGen) success(rt Route, op service.Operation, resp map[string]any) error {
	status := fmt.Sprint(rt.Status)
	switch {
	case rt.Reply == ReplyCard:
		// Served as the A2A card built from the operation's result.
		resp[status] = map[string]any{"description": "the agent's A2A agent card", "content": jsonContent(ref("AgentCard"))}
		return nil
	case rt.Reply == ReplyArchive:
		resp[status] = map[string]any{
			"description": "the skill as a reproducible zip; ETag is the digest of its bytes, so If-None-Match answers 304",
			"headers": map[string]any{
				"ETag":                map[string]any{"required": true, "schema": map[string]any{"type": "string"}, "description": "the quoted archive digest"},
				"Content-Disposition": map[string]any{"required": true, "schema": map[string]any{"type": "string"}, "description": "attachment, named after the skill"},
			},
			"content": map[string]any{"application/zip": map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": "application/zip"}}},
		}
		resp["304"] = notModified("the quoted archive digest")
		return nil
	case rt.Status == http.StatusNoContent || op.Result == nil:
		resp[status] = map[string]any{"description": "done"}
		return nil
	case rt.Reply == ReplyFile:
		resp[status] = map[string]any{
			"description": "the file's bytes, typed by its extension; ETag is its digest, so If-None-Match answers 304",
			"headers": map[string]any{
				"ETag":          map[string]any{"required": true, "schema": map[string]any{"type": "string"}, "description": "the quoted file digest"},
				"X-Skilld-Exec": map[string]any{"schema": map[string]any{"type": "string", "const": "true"}, "description": "present for an executable file"},
			},
			"content": fileContent(),
		}
		resp["304"] = notModified("the quoted file digest")
		return nil
	case rt.Reply == ReplyEvents:
		return g.events(resp, status)
	}
	schema, err := g.component(op.Result)
	if err != nil {
		return err
	}
	if rt.Reply == ReplyOneOrMany {
		items, ok := derefType(op.Result).FieldByName("Items")
		if !ok {
			return fmt.Errorf("result %s has no Items for a one-or-many reply", op.Result)
		}
		one, err := g.component(items.Type.Elem())
		if err != nil {
			return err
		}
		schema = map[string]any{"oneOf": []any{one, schema}, "description": "the only item itself when there is one, else the list"}
	}
	ok := map[string]any{"description": "OK", "content": jsonContent(schema)}
	resp[status] = ok
	if rt.Status == http.StatusCreated && op.Result.Implements(reflect.TypeFor[existed]()) {
		resp["200"] = map[string]any{"description": "it existed already (\"existing\": true); nothing was created", "content": jsonContent(schema)}
	}
	return nil
}

// events describes a task's log: one JSON answer with ?format=json, else a
// stream whose events carry the entries.
func (g *schemaGen) events(resp map[string]any, status string) error {
	list, err := g.component(reflect.TypeFor[TaskEventList]())
	if err != nil {
		return err
	}
	event, err := g.component(reflect.TypeFor[agent.Event]())
	if err != nil {
		return err
	}
	streamErr, err := g.component(reflect.TypeFor[ErrorObject]())
	if err != nil {
		return err
	}
	resp[status] = map[string]any{
		"description": "with ?format=json the entries after ?after (at most ?limit); otherwise a live Server-Sent Events stream",
		"content": map[string]any{
			"application/json": map[string]any{"schema": list},
			"text/event-stream": map[string]any{
				"schema": map[string]any{"type": "string", "description": "Server-Sent Events. Each entry is an event whose id is its seq, " +
					"whose name is its type and whose data is the entry as JSON (a TaskEvent); the stream ends when the task has " +
					"finished and every entry was sent. When the token stops being valid the stream ends with an event named error " +
					"whose data is an ErrorObject. When the server shuts down the stream ends at once with an event named shutdown " +
					"whose data is an ErrorObject (unavailable), after a retry field in milliseconds: reconnect with Last-Event-ID. " +
					"Comment lines keep an idle stream open. Too many open streams for the token is 429, for the server 503, " +
					"each with Retry-After."},
				// What the data of each event is, by event name ("*" is
				// every name but the others), for tools and the tests.
				"x-skilld-event-data": map[string]any{"*": event, "error": streamErr, ShutdownEvent: streamErr},
			},
		},
	}
	return nil
}

// notModified is the 304 of a download whose ETag still matches.
func notModified(etag string) map[string]any {
	return map[string]any{"description": "the copy the client holds is current (If-None-Match matched)",
		"headers": map[string]any{"ETag": map[string]any{"required": true, "schema": map[string]any{"type": "string"}, "description": etag}}}
}

// fileContent lists the content types a package file is served with (by
// its extension; anything else is application/octet-stream). The bytes
// are the file's whatever the type: a .json file is not checked to be
// JSON, so no media type has a schema.
func fileContent() map[string]any {
	out := map[string]any{"application/octet-stream": map[string]any{}}
	for _, ct := range contentTypes {
		base, _, _ := strings.Cut(ct, ";")
		out[base] = map[string]any{}
	}
	return out
}

// healthSchema describes the answer of GET /healthz.
func healthSchema() map[string]any {
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"status", "version", "checks"},
		"properties": map[string]any{
			"status": map[string]any{"type": "string", "enum": []string{"ok", "degraded", "unavailable"},
				"description": `"degraded" (still 200): the server answers but is short of disk space or file descriptors, as degraded says`},
			"degraded": map[string]any{"type": "array", "items": map[string]any{"type": "string"},
				"description": "what the server is short of, one sentence each; present only when it is"},
			"version": map[string]any{"type": "string", "description": "the server's version"},
			"checks": map[string]any{"type": "object", "required": []string{"db", "blobs"},
				"description":          `"ok", or "unavailable: " and why, for each backend`,
				"additionalProperties": map[string]any{"type": "string"}},
		},
	}
}

// agentCardSchema describes the card a2acard.Build makes: the A2A
// specification's AgentCard (whose JSON Schema is the A2A project's) with
// what skilld fills in.
func agentCardSchema() map[string]any {
	str := map[string]any{"type": "string"}
	strs := map[string]any{"type": "array", "items": str}
	return map[string]any{
		"type": "object",
		"description": "An AgentCard of the A2A protocol " + a2acard.ProtocolVersion + " (https://a2a-protocol.org); " +
			"its skills are the agent's disclosed skills, its url the agent's task endpoint",
		"required": []string{"name", "description", "url", "version", "protocolVersion", "capabilities",
			"defaultInputModes", "defaultOutputModes", "skills"},
		"properties": map[string]any{
			"name": str, "description": str, "url": str, "version": str,
			"protocolVersion":    map[string]any{"type": "string", "const": a2acard.ProtocolVersion},
			"preferredTransport": str,
			"capabilities":       map[string]any{"type": "object"},
			"defaultInputModes":  strs,
			"defaultOutputModes": strs,
			"securitySchemes":    map[string]any{"type": "object"},
			"security":           map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
			"skills": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "required": []string{"id", "name", "description", "tags"},
				"properties": map[string]any{"id": str, "name": str, "description": str, "tags": strs},
			}},
		},
	}
}
