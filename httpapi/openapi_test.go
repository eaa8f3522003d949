package httpapi_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/store/storetest"
)

// TestOpenAPI fetches the document, validates it against the OpenAPI 3.1
// specification, checks that every route is in it with its parameters,
// that every reference resolves, and that component names are valid; then
// validates request bodies the acceptance flow sends against it.
func TestOpenAPI(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open)
	r := e.request("GET", httpapi.OpenAPIPath, "", nil)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	// The specification's own JSON Schema (libopenapi-validator embeds
	// it) is the judge; the contract every test request is checked
	// against is the same document.
	c := apiContract()
	if c.err != nil {
		t.Fatal(c.err)
	}
	if !bytes.Equal(c.raw, r.body) {
		t.Error("the contract's document is not the one the server serves")
	}
	if ok, errs := c.validator.ValidateDocument(); !ok {
		t.Errorf("the document is not valid OpenAPI 3.1: %s", describe(errs))
	}
	var doc struct {
		OpenAPI    string                               `json:"openapi"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas         map[string]*jsonschema.Schema `json:"schemas"`
			SecuritySchemes map[string]map[string]any     `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("the document does not parse: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Components.SecuritySchemes["bearerAuth"]["scheme"] != "bearer" || doc.Components.Schemas["Error"] == nil {
		t.Errorf("openapi %q, security schemes %v", doc.OpenAPI, doc.Components.SecuritySchemes)
	}
	ids := map[string]bool{}
	for _, rt := range httpapi.Routes() {
		p := strings.ReplaceAll(rt.Pattern, "...}", "}")
		op := doc.Paths[p][strings.ToLower(rt.Method)]
		if op == nil {
			t.Errorf("%s %s is not in the document", rt.Method, p)
			continue
		}
		if name := rt.Op.Name; name != "" {
			if op["operationId"] != name || ids[name] {
				t.Errorf("%s %s: operationId %v", rt.Method, p, op["operationId"])
			}
			ids[name] = true
		}
		declared := map[string]bool{}
		params, _ := op["parameters"].([]any)
		for _, prm := range params {
			m := prm.(map[string]any)
			if m["in"] == "path" {
				declared[m["name"].(string)] = true
			}
		}
		for _, seg := range strings.Split(p, "/") {
			if name, ok := strings.CutPrefix(seg, "{"); ok && !declared[strings.TrimSuffix(name, "}")] {
				t.Errorf("%s %s: path parameter %s not declared", rt.Method, p, seg)
			}
		}
		if rt.Role == httpapi.RolePublic {
			continue
		}
		if _, ok := op["responses"].(map[string]any)["default"]; !ok {
			t.Errorf("%s %s: no error response", rt.Method, p)
		}
	}
	componentName := regexp.MustCompile(`^[a-zA-Z0-9.\-_]+$`)
	for name := range doc.Components.Schemas {
		if !componentName.MatchString(name) {
			t.Errorf("component name %q is not allowed by OpenAPI", name)
		}
	}
	// Every $ref points at a schema that exists.
	for _, ref := range refs(r.body) {
		if doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")] == nil && !strings.HasPrefix(ref, "#/components/responses/") {
			t.Errorf("dangling $ref %s", ref)
		}
	}

	// The inline create body validates against its schema; an unknown
	// field does not.
	create := doc.Paths["/v1/workspaces/{ws}/skills"]["post"]["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
	raw, _ := json.Marshal(create)
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("create schema does not resolve: %v", err)
	}
	good := map[string]any{"files": map[string]any{"SKILL.md": "x"}, "lenient": true}
	if err := rs.Validate(good); err != nil {
		t.Errorf("a valid create body fails the schema: %v", err)
	}
	if err := rs.Validate(map[string]any{"files": map[string]any{}, "bogus": 1}); err == nil {
		t.Error("an unknown field passes the schema")
	}
}

// refs lists every "$ref" value in a JSON document.
func refs(doc []byte) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, v := range x {
				if s, ok := v.(string); ok && k == "$ref" {
					out = append(out, s)
				}
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	var v any
	json.Unmarshal(doc, &v)
	walk(v)
	return out
}

// TestOpenAPITaskEvents checks what the document says tasks.events answers,
// the route a user found described as an array of stored log rows
// ({kind, payload, …}) under an invalid component name: {"items": [entry]}
// with each entry flat ({type, task_id, seq, time, …}), or the same entries
// as a Server-Sent Events stream.
func TestOpenAPITaskEvents(t *testing.T) {
	doc, err := httpapi.OpenAPI("test")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(doc)
	var d struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]*jsonschema.Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	ok := d.Paths["/v1/workspaces/{ws}/tasks/{id}/events"]["get"].Responses["200"]
	if got := ok.Content["application/json"].Schema["$ref"]; got != "#/components/schemas/TaskEventList" {
		t.Errorf("the JSON answer is %v", got)
	}
	if _, ok := ok.Content["text/event-stream"]; !ok {
		t.Error("the event stream is not documented")
	}
	list := d.Components.Schemas["TaskEventList"]
	if list == nil || list.Properties["items"] == nil || list.Properties["items"].Items == nil {
		t.Fatalf("TaskEventList: %+v", list)
	}
	entry := list.Properties["items"].Items
	for _, f := range []string{"type", "task_id", "seq", "time"} {
		if !slices.Contains(entry.Required, f) {
			t.Errorf("an entry does not require %q: %v", f, entry.Required)
		}
	}
	for _, f := range []string{"kind", "payload"} {
		if _, ok := entry.Properties[f]; ok {
			t.Errorf("an entry has the stored row's %q", f)
		}
	}
	// A task's config is its snapshot, not base64 bytes.
	if cfg := d.Components.Schemas["Task"].Properties["config"]; cfg == nil || cfg.Type != "object" || cfg.Properties["skills"] == nil {
		t.Errorf("Task.config is %+v", cfg)
	}
}
