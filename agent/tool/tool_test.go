package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
)

type greetParams struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty"`
	Data  []byte `json:"data,omitempty"`
}

func TestNew(t *testing.T) {
	tl, err := tool.New("greet", "Greets someone.", func(_ context.Context, p greetParams) (string, error) {
		if p.Name == "nobody" {
			return "", skilld.Errorf(skilld.ENOTFOUND, "no one to greet")
		}
		return strings.Repeat("hello "+p.Name+string(p.Data)+" ", max(p.Times, 1)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := json.Marshal(tl.Schema)
	for _, want := range []string{`"required":["name"]`, `"who to greet"`, `"additionalProperties":false`, `"contentEncoding":"base64"`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("schema %s lacks %s", schema, want)
		}
	}
	for _, tt := range []struct {
		args, want, code string
	}{
		{`{"name":"ada","times":2}`, "hello ada hello ada ", ""},
		{`{"name":"ada","data":"IQ=="}`, "hello ada! ", ""},
		{`{"name":"nobody"}`, "", skilld.ENOTFOUND},
		{`{}`, "", skilld.EINVALID},
		{`{"name":"ada","extra":1}`, "", skilld.EINVALID},
		{`{"name":3}`, "", skilld.EINVALID},
		{`not json`, "", skilld.EINVALID},
		{``, "", skilld.EINVALID},
	} {
		got, err := tl.Call(t.Context(), json.RawMessage(tt.args))
		if skilld.ErrorCode(err) != tt.code || got != tt.want {
			t.Errorf("Call(%s) = %q, %v; want %q, code %q", tt.args, got, err, tt.want, tt.code)
		}
	}
}

func TestText(t *testing.T) {
	var nilPtr *struct{}
	for _, tt := range []struct {
		v    any
		want string
	}{
		{nil, "ok"}, {nilPtr, "ok"}, {"plain", "plain"}, {map[string]int{"a": 1}, "{\n  \"a\": 1\n}"},
	} {
		if got, err := tool.Text(tt.v); err != nil || got != tt.want {
			t.Errorf("Text(%#v) = %q, %v", tt.v, got, err)
		}
	}
}
