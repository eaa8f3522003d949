package httpapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
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
// four common fields and then the fields of its payload. There is one
// variant per event type, made from its payload struct, so the document
// says what every event holds and cannot drift from what is sent.
func (g *schemaGen) taskEventSchema() (*jsonschema.Schema, error) {
	head := func() map[string]*jsonschema.Schema {
		return map[string]*jsonschema.Schema{
			"task_id": {Type: "string"},
			"seq":     {Type: "integer", Minimum: jsonschema.Ptr(1.0), Description: "the entry's place in the task's log, from 1 without gaps"},
			"time":    {Type: "string", Format: "date-time"},
		}
	}
	required := []string{"type", "task_id", "seq", "time"}
	s := &jsonschema.Schema{
		Type: "object",
		Description: "One entry of a task's log: every event and every message of the run, in order. " +
			"The fields after type, task_id, seq and time are those of the event's type, one variant each; docs/RUNTIME.md explains them.",
		Required:      required,
		Properties:    head(),
		PropertyOrder: required,
	}
	s.Properties["type"] = &jsonschema.Schema{Type: "string", Description: "the event type, which says the fields that follow"}
	for _, p := range agent.Payloads() {
		t := reflect.TypeOf(p)
		v, err := g.schema(t)
		if err != nil {
			return nil, fmt.Errorf("openapi: the payload of %s: %w", p.EventType(), err)
		}
		optionalEmbedded(t, v)
		nullableMaps(t, v)
		v.Title = p.EventType()
		v.Properties["type"] = &jsonschema.Schema{Const: jsonschema.Ptr[any](p.EventType())}
		maps.Copy(v.Properties, head())
		v.Required = append(slices.Clone(required), v.Required...)
		v.PropertyOrder = append(slices.Clone(required), v.PropertyOrder...)
		s.OneOf = append(s.OneOf, v)
		s.Properties["type"].Enum = append(s.Properties["type"].Enum, p.EventType())
	}
	return s, nil
}

// optionalEmbedded makes the fields a struct gets through an embedded
// pointer optional: encoding/json leaves them all out while it is nil.
func optionalEmbedded(t reflect.Type, s *jsonschema.Schema) {
	for _, f := range reflect.VisibleFields(t) {
		if !f.Anonymous || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
			continue
		}
		for _, inner := range reflect.VisibleFields(f.Type.Elem()) {
			if name, omit := jsonName(inner); !omit {
				s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
			}
		}
	}
}

// nullableMaps lets the properties that hold Go maps be null, at any
// depth: encoding/json writes a nil map as null, which reflection does
// not say.
func nullableMaps(t reflect.Type, s *jsonschema.Schema) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case s == nil:
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		nullableMaps(t.Elem(), s.Items)
	case t.Kind() == reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, omit := jsonName(f)
			p := s.Properties[name]
			if omit || f.Anonymous || !f.IsExported() || p == nil {
				continue
			}
			if f.Type.Kind() == reflect.Map && p.Type == "object" {
				p.Types, p.Type = []string{"null", "object"}, ""
			}
			nullableMaps(f.Type, p)
		}
	}
}

func newSchemaGen() (*schemaGen, error) {
	g := &schemaGen{opts: &jsonschema.ForOptions{TypeSchemas: selfEncoded()}, schemas: map[string]any{}, names: map[reflect.Type]string{}}
	ev, err := g.taskEventSchema()
	if err != nil {
		return nil, err
	}
	g.opts.TypeSchemas[reflect.TypeFor[agent.Event]()] = ev
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
