package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// Body limits, checked before anything is parsed. JSON bodies carry inline
// skills (5 MiB of files at most, plus escaping); archives are compressed
// uploads whose packages the pack limits bound again once read.
const (
	MaxJSONBody    = 8 << 20
	MaxArchiveBody = 64 << 20
)

// decoder holds what decoding a route's params needs, computed once per
// route when the handler is built.
type decoder struct {
	route   Route
	params  reflect.Type
	fields  []field
	query   map[string]field // by name: query parameters, also accepted as multipart form fields
	archive []int            // index of the field an archive route fills with the body
}

func newDecoder(rt Route, params reflect.Type) *decoder {
	d := &decoder{route: rt, params: params, fields: paramFields(params, rt.Body), query: map[string]field{}}
	for _, f := range d.fields {
		switch {
		case f.in == inQuery:
			d.query[f.name] = f
		case f.in == inArchive:
			d.archive = f.index
		}
		if f.in != inBody && f.in != inArchive && !scalarKind(f.typ) {
			panic(fmt.Sprintf("httpapi: %s %s: parameter %s of type %s cannot travel in a URL", rt.Method, rt.Pattern, f.name, f.typ))
		}
	}
	if rt.Body == BodyArchive && d.archive == nil {
		panic(fmt.Sprintf("httpapi: %s %s: archive route whose params (%s) have no []byte %q field", rt.Method, rt.Pattern, params, archiveField))
	}
	return d
}

// decode reads the request into a new params value (a pointer). The path
// and the query are checked first, so a request with a bad parameter is
// refused before its body is read; they are set after the body, which may
// not name them.
func (d *decoder) decode(w http.ResponseWriter, r *http.Request) (any, error) {
	var fromURL []assignment
	for _, f := range d.fields {
		if f.in == inPath {
			a, err := parseParam(f, r.PathValue(f.name), "path parameter")
			if err != nil {
				return nil, err
			}
			fromURL = append(fromURL, a)
		}
	}
	query, err := d.parseQuery(r)
	if err != nil {
		return nil, err
	}
	p := reflect.New(d.params)
	v := p.Elem()
	switch d.route.Body {
	case BodyJSON:
		if err := d.decodeJSON(w, r, p.Interface()); err != nil {
			return nil, err
		}
		for _, f := range d.fields {
			if f.in != inBody && !fieldValue(v, f.index).IsZero() {
				return nil, badRequest(f.name, "%q belongs in the URL %s, not in the body", f.name, map[fieldIn]string{inPath: "path", inQuery: "query"}[f.in])
			}
		}
	case BodyArchive:
		form, err := d.readArchive(w, r, v)
		if err != nil {
			return nil, err
		}
		for name, val := range form {
			if _, dup := query[name]; dup {
				return nil, badRequest(name, "%q is given both in the query and as a form field", name)
			}
			query[name] = val
		}
	}
	for _, name := range slices.Sorted(maps.Keys(query)) {
		if query[name] == "" {
			continue // an empty value means "not given"
		}
		a, err := parseParam(d.query[name], query[name], "parameter")
		if err != nil {
			return nil, err
		}
		fromURL = append(fromURL, a)
	}
	for _, a := range fromURL {
		fieldValue(v, a.f.index).Set(a.val)
	}
	return p.Interface(), nil
}

// assignment is a parsed URL parameter waiting to be set.
type assignment struct {
	f   field
	val reflect.Value
}

func parseParam(f field, s, what string) (assignment, error) {
	if !utf8.ValidString(s) {
		return assignment{}, badRequest(f.name, "%s %s is not valid UTF-8", what, f.name)
	}
	val := reflect.New(f.typ).Elem()
	if err := setScalar(val, s); err != nil {
		return assignment{}, badRequest(f.name, "%s %s %s", what, f.name, err)
	}
	return assignment{f: f, val: val}, nil
}

// readBody reads the whole body, refusing more than limit bytes before
// reading when the length is declared, and while reading when it is not.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, what string) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, tooLarge(limit, what)
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, bodyError(err, limit, what)
	}
	return buf.Bytes(), nil
}

func bodyError(err error, limit int64, what string) error {
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return tooLarge(limit, what)
	}
	if stalled := (errBodyStalled{}); errors.As(err, &stalled) {
		return &requestError{status: http.StatusRequestTimeout, err: skilld.Errorf(skilld.EINVALID, "%s; send the whole body without pausing", stalled.Error())}
	}
	return badRequest("", "reading the request body: %v", err)
}

// decodeJSON decodes the body strictly: one JSON object, valid UTF-8
// (encoding/json would silently replace invalid bytes), no lone surrogate
// or NUL escapes, no unknown fields, no key twice in one object. The
// duplicate check runs on a body the decoder accepted, so it walks valid
// JSON no deeper than encoding/json allows.
// An empty body is an empty object, so operations without required body
// fields can be called with none.
func (d *decoder) decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	body, err := readBody(w, r, MaxJSONBody, "JSON requests")
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if !utf8.Valid(body) {
		return badRequest("", "request body is not valid UTF-8 (first invalid byte at offset %d)", invalidUTF8At(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("", "request body must hold exactly one JSON object; found more after it")
	}
	if err := checkDuplicateKeys(body); err != nil {
		return err
	}
	return checkEscapes(body)
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// jsonError turns encoding/json's errors into messages naming the field.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badRequest("", "malformed JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("", "malformed JSON: the body ends in the middle of a value")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("", "request body must be a JSON object, not %s", typ.Value)
		}
		return badRequest(typ.Field, "field %q must be %s, not %s", typ.Field, service.JSONKind(typ.Type), typ.Value)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		name = strings.Trim(name, `"`)
		return badRequest(name, "unknown field %q", name)
	}
	return badRequest("", "malformed JSON: %s", msg)
}

// parseQuery returns the query parameters by name. Unknown and repeated
// names are 400s naming the parameter.
func (d *decoder) parseQuery(r *http.Request) (map[string]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("", "malformed query string: %v", err)
	}
	out := make(map[string]string, len(q))
	for name, vals := range q {
		if _, ok := d.query[name]; !ok {
			return nil, badRequest(name, "unknown query parameter %q%s", name, d.known())
		}
		if len(vals) > 1 {
			return nil, badRequest(name, "query parameter %q is given %d times; give it once", name, len(vals))
		}
		out[name] = vals[0]
	}
	return out, nil
}

// known lists the accepted query parameters for an error message.
func (d *decoder) known() string {
	if len(d.query) == 0 {
		return "; this route takes none"
	}
	names := make([]string, 0, len(d.query))
	for n := range d.query {
		names = append(names, n)
	}
	slices.Sort(names)
	return fmt.Sprintf("; this route takes %s", strings.Join(names, ", "))
}
