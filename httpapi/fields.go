package httpapi

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Where a parameter travels in a request. The server decodes and the
// client encodes through the same classification (paramFields), so the two
// cannot disagree about where a field goes.
type fieldIn int

const (
	inBody    fieldIn = iota // a property of the JSON body
	inPath                   // a {name} segment of the URL path (tag `path:"name"`)
	inQuery                  // a query parameter
	inArchive                // the raw request body of an archive upload
)

// field is one parameter of an operation.
type field struct {
	name  string // name in the path, query or JSON body
	json  string // name in the JSON encoding of the params
	in    fieldIn
	index []int // reflect index path from the params struct
	typ   reflect.Type
	desc  string // the jsonschema tag, for the OpenAPI document
}

// archiveField is the JSON name of the []byte field that an archive route
// fills with the request body.
const archiveField = "archive"

// paramFields classifies the exported fields of a params struct:
//   - a `path:"x"` tag puts the field in the URL path;
//   - a `query:"x"` tag puts it in the query string;
//   - on routes without a JSON body (GET, DELETE, archive uploads) every
//     other field is a query parameter named by its JSON name, so list
//     paging works on a GET whatever tags the service put on it;
//   - on archive routes the []byte "archive" field is the body itself;
//   - everything else is a property of the JSON body.
func paramFields(t reflect.Type, body BodyKind) []field {
	var out []field
	for _, sf := range reflect.VisibleFields(t) {
		if sf.Anonymous || !sf.IsExported() {
			continue
		}
		jsonName, omit := jsonName(sf)
		f := field{name: jsonName, json: jsonName, index: sf.Index, typ: sf.Type, desc: sf.Tag.Get("jsonschema")}
		switch {
		case sf.Tag.Get("path") != "":
			f.name, f.in = sf.Tag.Get("path"), inPath
		case sf.Tag.Get("query") != "":
			f.name, f.in = sf.Tag.Get("query"), inQuery
		case omit:
			continue
		case body == BodyArchive && jsonName == archiveField && sf.Type == reflect.TypeFor[[]byte]():
			f.in = inArchive
		case body != BodyJSON:
			f.in = inQuery
		default:
			f.in = inBody
		}
		out = append(out, f)
	}
	return out
}

// jsonName returns the name encoding/json uses for a field, and whether
// encoding/json skips it.
func jsonName(sf reflect.StructField) (string, bool) {
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return "", true
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = sf.Name
	}
	return name, false
}

// fieldValue returns the settable field at index inside the struct v,
// allocating nil embedded pointers on the way.
func fieldValue(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// derefType returns the type that t points to, through any number of
// pointers.
func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// timeType travels as an RFC 3339 string.
var timeType = reflect.TypeFor[time.Time]()

// scalarKind reports whether t (or what it points to) can travel as one
// string in a path segment or query parameter.
func scalarKind(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// setScalar parses s into v (a scalar or a pointer to one). The error says
// what was expected, in words an API caller understands.
func setScalar(v reflect.Value, s string) error {
	if v.Kind() == reflect.Pointer {
		p := reflect.New(v.Type().Elem())
		if err := setScalar(p.Elem(), s); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	if v.Type() == timeType {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return fmt.Errorf("must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", s)
		}
		v.Set(reflect.ValueOf(at))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("must be true or false, not %q", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("must be an integer, not %q", s)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("must be a non-negative integer, not %q", s)
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(s, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("must be a number, not %q", s)
		}
		v.SetFloat(n)
	default:
		return fmt.Errorf("has an unsupported type %s", v.Type())
	}
	return nil
}

// formatScalar is the inverse of setScalar, for the client. ok is false for
// a zero value, which the client leaves out (the server's default applies).
func formatScalar(v reflect.Value) (s string, ok bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", false
		}
		s, _ := formatScalar(v.Elem())
		return s, true // a set pointer is sent even when it points to zero
	}
	if v.IsZero() {
		return "", false
	}
	if at, ok := v.Interface().(time.Time); ok {
		return at.Format(time.RFC3339Nano), true
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), true
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), true
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, v.Type().Bits()), true
	}
	return fmt.Sprint(v.Interface()), true
}

// ParamNames lists, by their JSON names, the parameters of type t that a
// request to route r can carry (in the path, the query or the body). The
// parity test compares it with the agent tools' parameters.
func (r Route) ParamNames(t reflect.Type) []string {
	var out []string
	for _, f := range paramFields(t, r.Body) {
		out = append(out, f.json)
	}
	return out
}
