package httpapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/service"
)

// schemaGen describes Go types as the JSON Schemas of the OpenAPI
// document: jsonschema-go's reflection over the types the handlers encode,
// plus what reflection cannot see (types that encode themselves, raw JSON
// whose content the code knows). It collects the components as it goes.
type schemaGen struct {
	opts    *jsonschema.ForOptions
	schemas map[string]any          // components/schemas, by name
	names   map[reflect.Type]string // the component of each type added
}

// rawJSONField is a json.RawMessage field whose content is known: stored
// as raw JSON, it is always the encoding of holds.
type rawJSONField struct {
	in    reflect.Type
	field string // its JSON name
	holds reflect.Type
}

// rawJSONFields lists them. A raw field not listed is described as any
// JSON value.
func rawJSONFields() []rawJSONField {
	return []rawJSONField{
		// A task's config is its snapshot, fixed at start.
		{in: reflect.TypeFor[skilld.Task](), field: "config", holds: reflect.TypeFor[service.Snapshot]()},
	}
}

// selfEncoded are the schemas of types with their own MarshalJSON, which
// reflection over their fields would get wrong.
func selfEncoded() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[[]byte]():          {Type: "string", ContentEncoding: "base64"},
		reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"},
		reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
		reflect.TypeFor[agent.Event]():     taskEventSchema(),
		reflect.TypeFor[skilld.NetworkSettings](): {
			Description: "what the agent's commands may reach, through the sandbox's allowlist proxy: false (nothing, the default), " +
				"true (the public web: any public host on ports 80 and 443) or the hosts of allow; the server must allow it (--sandbox-network)",
			OneOf: []*jsonschema.Schema{{Type: "boolean"}, {Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
				Properties: map[string]*jsonschema.Schema{"allow": {Type: "array", Items: &jsonschema.Schema{Type: "string"},
					Description: `hosts: "api.example.com" (ports 80 and 443), "*.example.org", "example.com:8443", "127.0.0.1:9443"; none allows nothing`}}}},
		},
	}
}

// fixedNames are the component names of types whose Go name would say
// less than the API means.
func fixedNames() map[reflect.Type]string {
	return map[reflect.Type]string{
		reflect.TypeFor[ErrorBody]():   "Error",
		reflect.TypeFor[agent.Event](): "TaskEvent",
	}
}

// taskEventSchema describes agent.Event as it encodes itself: flat, its
// four common fields and then the fields of its type.
func taskEventSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Description: "One entry of a task's log: every event and every message of the run, in order. " +
			"The fields after type, task_id, seq and time are those of the event's type " +
			"(a message event has role, content, tool_calls, …; skill.activated has skill, tokens, placement, …); see docs/RUNTIME.md.",
		Required: []string{"type", "task_id", "seq", "time"},
		Properties: map[string]*jsonschema.Schema{
			"type": {Type: "string", Description: "the event type: task.started, message, llm.call.started, tool.call, " +
				"skill.activated, task.completed, task.failed, …"},
			"task_id": {Type: "string"},
			"seq":     {Type: "integer", Minimum: jsonschema.Ptr(1.0), Description: "the entry's place in the task's log, from 1 without gaps"},
			"time":    {Type: "string", Format: "date-time"},
		},
		PropertyOrder: []string{"type", "task_id", "seq", "time"},
	}
}

func newSchemaGen() (*schemaGen, error) {
	g := &schemaGen{opts: &jsonschema.ForOptions{TypeSchemas: selfEncoded()}, schemas: map[string]any{}, names: map[reflect.Type]string{}}
	// Raw fields are described by what they hold: the holder's schema is
	// made once, patched, and then used wherever the holder appears.
	for _, raw := range rawJSONFields() {
		s, err := g.schema(raw.in)
		if err != nil {
			return nil, err
		}
		held, err := g.schema(raw.holds)
		if err != nil {
			return nil, err
		}
		if _, ok := s.Properties[raw.field]; !ok {
			return nil, fmt.Errorf("openapi: %s has no JSON field %q", raw.in, raw.field)
		}
		held.Description = s.Properties[raw.field].Description
		s.Properties[raw.field] = held
		g.opts.TypeSchemas[raw.in] = s
	}
	return g, nil
}

// schema returns the JSON Schema of values of t as encoding/json writes
// them. A type that encodes itself and has no schema here is an error, so
// a new one cannot slip into the document described by its Go fields.
func (g *schemaGen) schema(t reflect.Type) (*jsonschema.Schema, error) {
	if err := encodable(t, g.opts.TypeSchemas, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	return jsonschema.ForType(t, g.opts)
}

// component returns a $ref to the schema of t under components/schemas,
// adding it the first time under a valid, unique name.
func (g *schemaGen) component(t reflect.Type) (map[string]any, error) {
	t = derefType(t)
	if name, ok := g.names[t]; ok {
		return ref(name), nil
	}
	s, err := g.schema(t)
	if err != nil {
		return nil, err
	}
	name, fixed := fixedNames()[t]
	if !fixed {
		name = uniqueName(schemaName(t), t, func(n string) bool { _, taken := g.schemas[n]; return taken })
	}
	if !validComponentName(name) {
		return nil, fmt.Errorf("openapi: component name %q of %s is not a valid OpenAPI name", name, t)
	}
	if _, taken := g.schemas[name]; taken {
		return nil, fmt.Errorf("openapi: component name %q of %s is taken", name, t)
	}
	g.names[t] = name
	g.schemas[name] = s
	return ref(name), nil
}

// encodable checks that every type reachable from t through the fields
// encoding/json writes is described correctly by reflection: it neither
// implements json.Marshaler or encoding.TextMarshaler (which reflection
// over its fields cannot see) nor is an interface other than any, unless
// known has its schema.
func encodable(t reflect.Type, known map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if _, ok := known[t]; ok {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return encodable(t.Elem(), known, seen)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return fmt.Errorf("openapi: %s is an interface: the values it may hold need a schema", t)
		}
		return nil
	}
	for _, m := range []reflect.Type{reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler]()} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return fmt.Errorf("openapi: %s encodes itself (%s); give it a schema in selfEncoded", t, m)
		}
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return encodable(t.Elem(), known, seen)
	case reflect.Map:
		return encodable(t.Elem(), known, seen)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if !f.IsExported() || f.Anonymous {
				continue
			}
			if _, omit := jsonName(f); omit {
				continue
			}
			if err := encodable(f.Type, known, seen); err != nil {
				return fmt.Errorf("%s.%s: %w", t, f.Name, err)
			}
		}
	}
	return nil
}

// decodedSchema turns the schema of what encoding/json writes into the
// schema of what it reads: decoding requires no property (an absent one
// keeps its zero value, and the service refuses what it needs with 422,
// naming it), so none is required at any depth.
func decodedSchema(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.Required = nil
	for _, p := range s.Properties {
		decodedSchema(p)
	}
	decodedSchema(s.Items)
	decodedSchema(s.AdditionalProperties)
}
