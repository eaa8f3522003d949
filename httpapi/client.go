package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// Client calls a skilld server. It is built on the same route table and
// parameter classification as the server: Call runs any operation whose
// answer is JSON, with its service params and result types, and errors
// come back as *skilld.Error with the server's code.
type Client struct {
	// BaseURL is the server's root, such as http://127.0.0.1:8080.
	BaseURL string
	// Token is sent as "Authorization: Bearer <Token>".
	Token string
	// Workspace (an ID or a name) fills {ws} in workspace routes.
	Workspace string
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
}

// Call runs operation op on the server with params and returns its
// result. It is a function, not a method of Client, because methods
// cannot have type parameters; they are what make the compiler check
// params and result at every call. Operations that do not answer with
// their result as JSON have methods of their own: GetFile for
// skills.get_file, TaskEvents for tasks.events.
func Call[P, R any](ctx context.Context, c *Client, op service.Op[P, R], params P) (R, error) {
	return call(ctx, c, op, params, nil, 0)
}

// call is Call with, for archive routes, the body read from archive (when
// not nil) instead of the params' archive bytes.
func call[P, R any](ctx context.Context, c *Client, op service.Op[P, R], params P, archive io.Reader, size int64) (R, error) {
	var res R
	rt, err := clientRoute(op.Operation)
	if err != nil {
		return res, err
	}
	if rt.Reply != ReplyJSON && rt.Reply != ReplyOneOrMany {
		return res, fmt.Errorf("httpapi: %s does not answer with its result as JSON; use the Client's method for it", op.Name)
	}
	var into any
	if op.Result != nil {
		into = resultTarget(&res)
	}
	if err := c.send(ctx, rt, params, archive, size, into); err != nil {
		var zero R
		return zero, err
	}
	return res, nil
}

// resultTarget is what the answer is decoded into to fill *res: for a
// pointer result a new value it points to, so that the decoder sees a
// pointer to the struct (as a one-or-many answer needs).
func resultTarget[R any](res *R) any {
	v := reflect.ValueOf(res).Elem()
	if v.Kind() != reflect.Pointer {
		return res
	}
	v.Set(reflect.New(v.Type().Elem()))
	return v.Interface()
}

// send sends a request of route rt with params (a value of its
// operation's params type) and decodes the answer into result (a
// pointer, or nil to discard it). For archive routes, archive (when not
// nil) is the body instead of the params' archive bytes.
func (c *Client) send(ctx context.Context, rt Route, params any, archive io.Reader, size int64, result any) error {
	req, err := c.newRequest(ctx, rt, params, archive, size)
	if err != nil {
		return err
	}
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeResult(resp, rt, result)
}

func clientRoute(op service.Operation) (Route, error) {
	rt, ok := RouteFor(op)
	if !ok {
		return Route{}, fmt.Errorf("httpapi: operation %q has no route", op.Name)
	}
	return rt, nil
}

// newRequest builds the request of an operation: path wildcards, query
// parameters and body from the params fields, exactly as the server's
// decoder reads them back. For archive routes, archive (when not nil)
// streams the body instead of the params' archive bytes.
func (c *Client) newRequest(ctx context.Context, rt Route, params any, archive io.Reader, size int64) (*http.Request, error) {
	op := rt.Op
	v := reflect.ValueOf(params)
	if v.Type() != op.Params {
		return nil, fmt.Errorf("httpapi: %s takes %s, not %T", op.Name, op.Params, params)
	}
	// A settable copy: the field walk fills nil embedded pointers.
	pv := reflect.New(op.Params).Elem()
	pv.Set(v)
	fields := paramFields(op.Params, rt.Body)
	path, err := c.expand(rt, pv, fields)
	if err != nil {
		return nil, err
	}
	query := url.Values{}
	var body io.Reader
	var contentType string
	for _, f := range fields {
		fv := fieldValue(pv, f.index)
		switch f.in {
		case inQuery:
			if s, ok := formatScalar(fv); ok {
				query.Set(f.name, s)
			}
		case inArchive:
			if archive == nil {
				archive, size = bytes.NewReader(fv.Bytes()), int64(fv.Len())
			}
		}
	}
	switch rt.Body {
	case BodyJSON:
		b, err := bodyJSON(pv, fields)
		if err != nil {
			return nil, err
		}
		body, size, contentType = bytes.NewReader(b), int64(len(b)), "application/json"
	case BodyArchive:
		body, contentType = archive, "application/octet-stream"
	}
	u := strings.TrimRight(c.BaseURL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, rt.Method, u, body)
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "bad server URL %q: %v", c.BaseURL, err)
	}
	if body != nil {
		req.ContentLength = size
		req.Header.Set("Content-Type", contentType)
	}
	return req, nil
}

// bodyJSON encodes the params without the fields that travel in the URL
// (the server refuses a body that sets them).
func bodyJSON(pv reflect.Value, fields []field) ([]byte, error) {
	b, err := json.Marshal(pv.Interface())
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, f := range fields {
		if f.in != inBody {
			delete(m, f.json)
		}
	}
	return json.Marshal(m)
}

// expand fills the wildcards of the route's pattern. A {name...} wildcard
// keeps its slashes; every other value is one escaped segment.
func (c *Client) expand(rt Route, pv reflect.Value, fields []field) (string, error) {
	segs := strings.Split(rt.Pattern, "/")
	for i, seg := range segs {
		if !strings.HasPrefix(seg, "{") {
			continue
		}
		name := strings.TrimSuffix(strings.Trim(seg, "{}"), "...")
		var val string
		if name == "ws" {
			val = c.Workspace
		} else {
			for _, f := range fields {
				if f.in == inPath && f.name == name {
					val, _ = formatScalar(fieldValue(pv, f.index))
				}
			}
		}
		if val == "" {
			if name == "ws" {
				return "", skilld.Errorf(skilld.EINVALID, "no workspace given: set the client's Workspace")
			}
			return "", skilld.Errorf(skilld.EINVALID, "%s: %s is required", rt.Op.Name, name)
		}
		if strings.HasSuffix(seg, "...}") {
			parts := strings.Split(val, "/")
			for j := range parts {
				parts[j] = url.PathEscape(parts[j])
			}
			segs[i] = strings.Join(parts, "/")
		} else {
			segs[i] = url.PathEscape(val)
		}
	}
	return strings.Join(segs, "/"), nil
}

// do sends the request with the token; a transport failure is
// EUNAVAILABLE (the server could not be reached, or went away).
func (c *Client) do(req *http.Request) (*http.Response, error) {
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, &skilld.Error{Code: skilld.EUNAVAILABLE, Message: fmt.Sprintf("cannot reach the server at %s: %v", c.BaseURL, unwrapURLError(err)), Err: err}
	}
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotModified {
		defer resp.Body.Close()
		return nil, responseError(resp)
	}
	return resp, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// responseError reads the server's error body back into a *skilld.Error;
// a body that is not skilld's (a proxy's page) keeps the status's code.
func responseError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body ErrorBody
	if json.Unmarshal(data, &body) == nil && body.Error.Code != "" {
		return &skilld.Error{Code: body.Error.Code, Message: body.Error.Message, Details: body.Error.Details}
	}
	text := strings.TrimSpace(string(data))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	msg := "the server answered " + resp.Status
	if text != "" {
		msg += ": " + text
	}
	return &skilld.Error{Code: codeOfStatus(resp.StatusCode), Message: msg}
}

// decodeResult decodes a success into result. A one-or-many reply is
// always decoded into the list shape, so callers see one type.
func decodeResult(resp *http.Response, rt Route, result any) error {
	if result == nil || resp.StatusCode == http.StatusNoContent {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return &skilld.Error{Code: skilld.EUNAVAILABLE, Message: "reading the server's answer: " + err.Error(), Err: err}
	}
	if rt.Reply == ReplyOneOrMany {
		var probe map[string]json.RawMessage
		if json.Unmarshal(data, &probe) == nil && probe["items"] == nil {
			if items := itemsField(result); items.IsValid() {
				one := reflect.New(items.Type().Elem())
				if err := json.Unmarshal(data, one.Interface()); err != nil {
					return fmt.Errorf("decoding the answer of %s: %w", rt.Op.Name, err)
				}
				items.Set(reflect.Append(reflect.MakeSlice(items.Type(), 0, 1), one.Elem()))
				return nil
			}
		}
	}
	if err := json.Unmarshal(data, result); err != nil {
		return fmt.Errorf("decoding the answer of %s: %w", rt.Op.Name, err)
	}
	return nil
}

// itemsField returns the settable Items slice of *struct result, or an
// invalid value.
func itemsField(result any) reflect.Value {
	v := reflect.ValueOf(result)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	items := v.Elem().FieldByName("Items")
	if !items.IsValid() || items.Kind() != reflect.Slice {
		return reflect.Value{}
	}
	return items
}
