// Package tool holds what a model can call: a name, a description, a JSON
// Schema for the arguments, and a function. Tools are built from typed Go
// functions, so the schema always matches what the function decodes.
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skilld/skilld"
)

// Tool is one callable tool.
type Tool struct {
	Name        string
	Description string
	// Schema describes the JSON object of arguments.
	Schema *jsonschema.Schema
	// Call runs the tool with the model's JSON arguments. It returns the
	// text the model reads, or an error; errors are reported to the model
	// as tool errors, so they must say what went wrong.
	Call func(ctx context.Context, args json.RawMessage) (string, error)
	// Idempotent marks a tool whose call may run twice with the same
	// effect (a read, a write of given content). A call in flight when a
	// task stopped is run again on resume only when its tool is
	// idempotent; otherwise the model is told it was interrupted.
	Idempotent bool
}

// SchemaFor returns the JSON Schema of a parameter type. Byte slices are
// base64 strings, as encoding/json writes them.
func SchemaFor(t reflect.Type) (*jsonschema.Schema, error) {
	return jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[[]byte]():          {Type: "string", ContentEncoding: "base64"},
		reflect.TypeFor[json.RawMessage](): {},
	}})
}

// New builds a tool from a typed function: its schema comes from P, and
// arguments are decoded strictly (unknown fields and wrong types are
// errors naming the field) and checked against the schema before fn runs.
// The result is returned as JSON text, or as is when it is a string.
func New[P, R any](name, description string, fn func(ctx context.Context, p P) (R, error)) (*Tool, error) {
	return NewForType(name, description, reflect.TypeFor[P](), func(ctx context.Context, p any) (any, error) {
		return fn(ctx, p.(P))
	})
}

// NewForType is New for a parameter type known only at run time; fn gets a
// value of type t.
func NewForType(name, description string, t reflect.Type, fn func(ctx context.Context, p any) (any, error)) (*Tool, error) {
	schema, err := SchemaFor(t)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	return &Tool{
		Name:        name,
		Description: description,
		Schema:      schema,
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			p, err := decode(t, resolved, args)
			if err != nil {
				return "", err
			}
			out, err := fn(ctx, p)
			if err != nil {
				return "", err
			}
			return Text(out)
		},
	}, nil
}

// decode reads args into a new value of type t.
func decode(t reflect.Type, schema *jsonschema.Resolved, args json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var generic any
	if err := json.Unmarshal(args, &generic); err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "arguments are not valid JSON: %v", err)
	}
	if err := schema.Validate(generic); err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "invalid arguments: %v", err)
	}
	p := reflect.New(t)
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p.Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, skilld.Errorf(skilld.EINVALID, "invalid arguments: %s must be %s", te.Field, te.Type)
		}
		return nil, skilld.Errorf(skilld.EINVALID, "invalid arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return p.Elem().Interface(), nil
}

// Text renders a tool result for the model: strings as they are, anything
// else as indented JSON, nil as "ok".
func Text(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "ok", nil
	case string:
		return v, nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return "ok", nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding the result: %w", err)
	}
	return string(b), nil
}
