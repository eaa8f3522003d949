package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skilld/skilld/interop/a2acard"
	"github.com/skilld/skilld/service"
)

// OpenAPI returns the OpenAPI 3.1 document of the API, generated from the
// route table and the operations' Go types, so it cannot drift from what
// the server decodes and writes.
func OpenAPI(version string) (map[string]any, error) {
	g := &openAPIGen{schemas: map[string]any{}, names: map[reflect.Type]string{}}
	errSchema, err := g.schema(reflect.TypeFor[ErrorBody]())
	if err != nil {
		return nil, err
	}
	g.schemas["Error"] = errSchema
	paths := map[string]map[string]any{}
	for _, rt := range Routes() {
		op, err := g.operation(rt)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s %s: %w", rt.Method, rt.Pattern, err)
		}
		p := strings.ReplaceAll(rt.Pattern, "...}", "}")
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(rt.Method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "skilld API",
			"version":     version,
			"description": "Agent Skills server: workspaces, skills and their versions, the catalog, install policy and agents. See docs/API.md.",
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
			},
		},
	}, nil
}

// openAPIHandler serves the document, built once.
func (s *Server) openAPIHandler() http.Handler {
	doc, err := OpenAPI(s.Version)
	var body []byte
	if err == nil {
		body, err = json.MarshalIndent(doc, "", "  ")
	}
	if err != nil {
		panic(err) // a Go type the schema generator cannot describe: a bug, found by the tests
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(body)
	})
}

type openAPIGen struct {
	schemas map[string]any
	names   map[reflect.Type]string
}

var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[[]byte](): {Type: "string", ContentEncoding: "base64"},
}}

func (g *openAPIGen) schema(t reflect.Type) (*jsonschema.Schema, error) {
	return jsonschema.ForType(t, schemaOptions)
}

// component returns a $ref to the schema of t under components/schemas,
// adding it the first time.
func (g *openAPIGen) component(t reflect.Type) (any, error) {
	t = derefType(t)
	if name, ok := g.names[t]; ok {
		return ref(name), nil
	}
	s, err := g.schema(t)
	if err != nil {
		return nil, err
	}
	name := t.Name()
	if _, taken := g.schemas[name]; taken || name == "" {
		name = strings.ReplaceAll(t.String(), ".", "_")
	}
	g.names[t] = name
	g.schemas[name] = s
	return ref(name), nil
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func jsonContent(schema any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

func (g *openAPIGen) operation(rt Route) (map[string]any, error) {
	out := map[string]any{"responses": map[string]any{}}
	resp := out["responses"].(map[string]any)
	if rt.Role == RolePublic {
		out["security"] = []any{}
		out["summary"] = map[string]string{HealthPath: "Health of the server and its storage", OpenAPIPath: "This document"}[rt.Pattern]
		resp[fmt.Sprint(rt.Status)] = map[string]any{"description": "OK", "content": map[string]any{"application/json": map[string]any{}}}
		return out, nil
	}
	op, ok := service.OperationByName(rt.Op)
	if !ok {
		return nil, fmt.Errorf("unknown operation %q", rt.Op)
	}
	tag, _, _ := strings.Cut(rt.Op, ".")
	out["operationId"] = rt.Op
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
	ok2, err := g.success(rt, op)
	if err != nil {
		return nil, err
	}
	resp[fmt.Sprint(rt.Status)] = ok2
	if rt.Status == http.StatusCreated && op.Result != nil && op.Result.Implements(reflect.TypeFor[existed]()) {
		resp[fmt.Sprint(http.StatusOK)] = ok2
	}
	resp["default"] = map[string]any{"$ref": "#/components/responses/Error"}
	return out, nil
}

var roleText = map[string]string{
	RoleViewer:   "any token of the workspace (viewer, member or admin)",
	RoleMember:   "a member or admin token of the workspace",
	RoleAdmin:    "an admin token of the workspace",
	RoleInstance: "an instance-admin token",
}

func (g *openAPIGen) parameters(rt Route, fields []field) ([]any, error) {
	var out []any
	if rt.Workspace() {
		out = append(out, map[string]any{"name": "ws", "in": "path", "required": true,
			"description": "the workspace's ID or name", "schema": map[string]any{"type": "string"}})
	}
	for _, f := range fields {
		if f.in != inPath && f.in != inQuery {
			continue
		}
		s, err := g.schema(f.typ)
		if err != nil {
			return nil, err
		}
		p := map[string]any{"name": f.name, "in": map[fieldIn]string{inPath: "path", inQuery: "query"}[f.in], "schema": s}
		if f.desc != "" {
			p["description"] = f.desc
		}
		if f.in == inPath {
			p["required"] = true
		}
		out = append(out, p)
	}
	return out, nil
}

func (g *openAPIGen) requestBody(rt Route, params reflect.Type, fields []field) (map[string]any, error) {
	switch rt.Body {
	case BodyJSON:
		s, err := g.schema(params)
		if err != nil {
			return nil, err
		}
		for _, f := range fields {
			if f.in != inBody {
				delete(s.Properties, f.name)
				s.Required = slices.DeleteFunc(s.Required, func(n string) bool { return n == f.name })
				s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(n string) bool { return n == f.name })
			}
		}
		return map[string]any{"required": false, "content": jsonContent(s),
			"description": fmt.Sprintf("a JSON object of at most %s", formatMiB(MaxJSONBody))}, nil
	case BodyArchive:
		form := map[string]any{uploadFormField: map[string]any{"type": "string", "contentMediaType": "application/octet-stream",
			"description": "the zip, tar or tar.gz archive"}}
		for _, f := range fields {
			if f.in == inQuery {
				s, err := g.schema(f.typ)
				if err != nil {
					return nil, err
				}
				s.Description = f.desc
				form[f.name] = s
			}
		}
		content := map[string]any{"multipart/form-data": map[string]any{"schema": map[string]any{
			"type": "object", "required": []string{uploadFormField}, "properties": form}}}
		for _, t := range []string{"application/zip", "application/gzip", "application/x-tar", "application/octet-stream"} {
			content[t] = map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": t}}
		}
		return map[string]any{"required": true, "content": content,
			"description": fmt.Sprintf("the archive as the raw body or the multipart field %q; at most %s", uploadFormField, formatMiB(MaxArchiveBody))}, nil
	}
	return nil, nil
}

func (g *openAPIGen) success(rt Route, op service.Operation) (map[string]any, error) {
	switch {
	case rt.Status == http.StatusNoContent || op.Result == nil:
		return map[string]any{"description": "done"}, nil
	case rt.Op == "agents.card":
		// Served as the A2A card built from the operation's result, not
		// the result itself; the card's schema is the A2A specification's.
		return map[string]any{"description": "the agent's A2A agent card", "content": jsonContent(map[string]any{
			"type": "object", "required": []string{"name", "description", "url", "version", "capabilities", "skills"},
			"description": "an AgentCard of the A2A protocol " + a2acard.ProtocolVersion + " (https://a2a-protocol.org); its skills are the agent's disclosed skills"})}, nil
	case rt.Reply == ReplyFile:
		return map[string]any{
			"description": "the file's bytes; ETag is its digest, so If-None-Match answers 304",
			"headers": map[string]any{
				"ETag":          map[string]any{"schema": map[string]any{"type": "string"}, "description": "the quoted file digest"},
				"X-Skilld-Exec": map[string]any{"schema": map[string]any{"type": "string"}, "description": "\"true\" for an executable file"},
			},
			"content": map[string]any{"*/*": map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": "application/octet-stream"}}},
		}, nil
	}
	list, err := g.component(op.Result)
	if err != nil {
		return nil, err
	}
	schema := list
	if rt.Reply == ReplyOneOrMany {
		items, ok := derefType(op.Result).FieldByName("Items")
		if !ok {
			return nil, fmt.Errorf("result %s has no Items for a one-or-many reply", op.Result)
		}
		one, err := g.component(items.Type.Elem())
		if err != nil {
			return nil, err
		}
		schema = map[string]any{"oneOf": []any{one, list}}
	}
	return map[string]any{"description": "OK", "content": jsonContent(schema)}, nil
}
