package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/httpapi"
)

// TestOpenAPIEventStream reads a finished task's log as a Server-Sent
// Events stream and as JSON through the checked request helper, so both
// answers are held to the document: every event's data against TaskEvent,
// its id and name against its seq and type, the JSON against
// TaskEventList.
func TestOpenAPIEventStream(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := e.withExecutor(t)
	e.must(201, "POST", "/v1/workspaces/default/skills", e.admin, map[string]any{"files": map[string]string{"SKILL.md": skillMD("helper", "Helps.")}})
	e.must(201, "POST", "/v1/workspaces/default/agents", e.admin, map[string]any{
		"name": "bot", "config": map[string]any{"model": "test:m", "instruction": "Be useful."}, "skills": []map[string]any{{"skill": "helper"}}})
	m.push(toolCall("c1", agent.ActivateSkill, map[string]string{"skill_name": "helper"}))
	m.push(final("All done."))
	task := e.must(201, "POST", "/v1/workspaces/default/agents/bot/tasks", e.admin, map[string]any{"input": "help me"})
	base := "/v1/workspaces/default/tasks/" + task["id"].(string)

	// The stream of a running task follows it to its end, then closes.
	r := e.request("GET", base+"/events", e.admin, nil)
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", r.status, r.header.Get("Content-Type"))
	}
	events := parseSSE(r.body)
	names := map[string]bool{}
	for _, ev := range events {
		names[ev.name] = true
	}
	for _, want := range []string{agent.EventTaskStarted, agent.EventSkillActivated, agent.EventMessage, agent.EventTaskCompleted} {
		if !names[want] {
			t.Errorf("the stream has no %s event: %v", want, names)
		}
	}
	js := e.must(200, "GET", base+"/events?format=json", e.admin, nil)
	if items, _ := js["items"].([]any); len(items) != len(events) {
		t.Errorf("the JSON log has %d entries, the stream %d", len(items), len(events))
	}
	// Resuming with Last-Event-ID (a documented header) sends the rest.
	if rest := parseSSE(e.request("GET", base+"/events", e.admin, nil, "Last-Event-ID", "2").body); len(rest) != len(events)-2 {
		t.Errorf("resumed after 2: %d of %d events", len(rest), len(events))
	}
}

// TestOpenAPIEventStreamError revokes the token of a stream that follows a
// running task: the stream ends with an error event, whose data the
// document says is an ErrorObject.
func TestOpenAPIEventStreamError(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	task := e.slowTask(t)
	tok := e.must(201, "POST", "/v1/workspaces/default/tokens", e.admin, map[string]any{"name": "watcher", "role": "viewer"})

	// By hand, to revoke the token once the stream has begun.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/workspaces/default/tasks/"+task["id"].(string)+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+tok["token"].(string))
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	e.must(204, "DELETE", "/v1/workspaces/default/tokens/"+tok["id"].(string), e.admin, nil)
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	e.checkContract(req, nil, resp, data)
	events := parseSSE(data)
	if len(events) == 0 || events[len(events)-1].name != "error" || !strings.Contains(events[len(events)-1].data, skilld.EUNAUTHORIZED) {
		t.Errorf("the stream did not end with an error event:\n%s", clip(data))
	}
}

// eventHead are the fields every event has.
var eventHead = []string{"type", "task_id", "seq", "time"}

// payloadFields returns the JSON fields of a payload struct as
// encoding/json writes them, each with whether it may be absent: tagged
// omitempty or omitzero, or reached through an embedded pointer (all left
// out while it is nil).
func payloadFields(t *testing.T, typ reflect.Type) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	var walk func(typ reflect.Type, optional bool)
	walk = func(typ reflect.Type, optional bool) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if tag == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				ft, ptr := f.Type, f.Type.Kind() == reflect.Pointer
				if ptr {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, optional || ptr)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := out[name]; dup {
				t.Errorf("%s has two fields named %q", typ, name)
			}
			out[name] = optional || strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		}
	}
	walk(typ, false)
	for name := range out {
		if slices.ContainsFunc(eventHead, func(h string) bool { return strings.EqualFold(h, name) }) {
			t.Errorf("%s has a field %q, which every event has already", typ, name)
		}
	}
	return out
}

// TestTaskEventSchemaMatchesPayloads holds the document's TaskEvent to the
// payload structs: one variant per event type, with the common fields and
// exactly the payload's, required unless the payload may leave them out.
func TestTaskEventSchemaMatchesPayloads(t *testing.T) {
	doc, err := httpapi.OpenAPI("test")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(doc)
	var d struct {
		Components struct {
			Schemas map[string]*jsonschema.Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	list := d.Components.Schemas["TaskEventList"]
	if list == nil || list.Properties["items"] == nil || list.Properties["items"].Items == nil {
		t.Fatalf("TaskEventList: %+v", list)
	}
	ev := list.Properties["items"].Items
	variants := map[string]*jsonschema.Schema{}
	for _, v := range ev.OneOf {
		typ := v.Properties["type"]
		if typ == nil || typ.Const == nil {
			t.Fatalf("a variant without its type: %+v", v)
		}
		variants[(*typ.Const).(string)] = v
	}
	var types []string
	for _, p := range agent.Payloads() {
		types = append(types, p.EventType())
		v := variants[p.EventType()]
		if v == nil {
			t.Errorf("TaskEvent has no variant for %s", p.EventType())
			continue
		}
		fields := payloadFields(t, reflect.TypeOf(p))
		want, wantRequired := slices.Clone(eventHead), slices.Clone(eventHead)
		for name, optional := range fields {
			want = append(want, name)
			if !optional {
				wantRequired = append(wantRequired, name)
			}
		}
		if got := slices.Sorted(maps.Keys(v.Properties)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("%s: the document has %v, the payload %v", p.EventType(), got, slices.Sorted(slices.Values(want)))
		}
		if got := slices.Sorted(slices.Values(v.Required)); !slices.Equal(got, slices.Sorted(slices.Values(wantRequired))) {
			t.Errorf("%s: the document requires %v, the payload always has %v", p.EventType(), got, slices.Sorted(slices.Values(wantRequired)))
		}
	}
	if len(variants) != len(types) || !slices.Equal(slices.Sorted(slices.Values(types)), slices.Sorted(maps.Keys(variants))) {
		t.Errorf("TaskEvent's variants are %v, the event types %v", slices.Sorted(maps.Keys(variants)), types)
	}
	if enum := ev.Properties["type"].Enum; len(enum) != len(types) {
		t.Errorf("TaskEvent's type lists %v", enum)
	}
}

// docRow is a row of docs/RUNTIME.md's table of events: | `type` | when |
// fields |, each field `name`, `name`? when it may be absent, with notes
// in parentheses.
var (
	docRow     = regexp.MustCompile("^\\| `([a-z.]+)` \\|[^|]*\\|([^|]*)\\|$")
	docField   = regexp.MustCompile("`([a-z_]+)`(\\?)?")
	docComment = regexp.MustCompile(`\([^()]*\)`)
)

// TestEventsDocumented holds docs/RUNTIME.md's table of events to the
// payload structs: a row per event type, listing exactly its fields, each
// marked optional exactly when the payload may leave it out.
func TestEventsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/RUNTIME.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "\n## Events\n")
	section, _, _ = strings.Cut(section, "\n#")
	rows := map[string]map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("%s has two rows", m[1])
		}
		fields := m[2]
		for prev := ""; prev != fields; {
			prev, fields = fields, docComment.ReplaceAllString(fields, "")
		}
		rows[m[1]] = map[string]bool{}
		for _, f := range docField.FindAllStringSubmatch(fields, -1) {
			rows[m[1]][f[1]] = f[2] == "?"
		}
	}
	for _, p := range agent.Payloads() {
		doc, ok := rows[p.EventType()]
		if !ok {
			t.Errorf("docs/RUNTIME.md has no row for %s", p.EventType())
			continue
		}
		delete(rows, p.EventType())
		if want := payloadFields(t, reflect.TypeOf(p)); !maps.Equal(doc, want) {
			t.Errorf("docs/RUNTIME.md says %s has %v (name: may be absent); its payload has %v", p.EventType(), doc, want)
		}
	}
	for typ := range rows {
		t.Errorf("docs/RUNTIME.md has a row for %s, which is no event type", typ)
	}
}
