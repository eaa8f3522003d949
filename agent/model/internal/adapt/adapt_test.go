package adapt

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
)

func TestMessageFromBody(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"m1","type":"x"}}`:                "m1",
		`{"type":"error","error":{"type":"x","message":"m2"}}`: "m2",
		`{"error":"m3"}`: "m3",
		`{"object":"error","message":"m4","code":404}`: "m4",
		`{"detail":"m5"}`: "m5",
		`{"detail":[{"loc":["body"],"msg":"bad"}]}`: `[{"loc":["body"],"msg":"bad"}]`,
		"<html>\nBad Gateway</html>":                "<html>",
		`{}`:                                        "",
	} {
		if got := MessageFromBody([]byte(body)); got != want {
			t.Errorf("MessageFromBody(%s) = %q, want %q", body, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"bad key my-custom-key!":                         "bad key [redacted]!",
		"Incorrect API key provided: sk-proj-abc***xyz.": "Incorrect API key provided: [redacted].",
		"key sk-ant-api03-AbC_d-e is invalid":            "key [redacted] is invalid",
		"no secrets here, ask-me":                        "no secrets here, ask-me",
	} {
		if got := Redact(in, "my-custom-key"); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStatusErrorCodes(t *testing.T) {
	for status, code := range map[int]string{
		400: skilld.EINVALID, 401: skilld.EUNAUTHORIZED, 402: skilld.EINVALID, 403: skilld.EUNAUTHORIZED,
		404: skilld.EINVALID, 408: skilld.EUNAVAILABLE, 409: skilld.EUNAVAILABLE, 413: skilld.ETOOLARGE,
		422: skilld.EINVALID, 429: skilld.ERATELIMITED, 500: skilld.EUNAVAILABLE, 503: skilld.EUNAVAILABLE, 529: skilld.EUNAVAILABLE,
	} {
		if got := StatusError("p", status, "m", "").Code; got != code {
			t.Errorf("status %d: %s, want %s", status, got, code)
		}
	}
}

func TestArguments(t *testing.T) {
	for in, want := range map[string]string{
		"":                `{}`,
		"  ":              `{}`,
		`{"a":1}`:         `{"a":1}`,
		` {"a": [1, 2]} `: `{"a": [1, 2]}`,
		`{"a":`:           `"{\"a\":"`,
		`not json at all`: `"not json at all"`,
	} {
		got := Arguments(in)
		if string(got) != want || !json.Valid(got) {
			t.Errorf("Arguments(%q) = %s, want %s", in, got, want)
		}
	}
	if got := ObjectArguments(json.RawMessage(`"x"`)); string(got) != `{}` {
		t.Errorf("ObjectArguments(string) = %s", got)
	}
	if got := ObjectArguments(json.RawMessage(`{"a":1}`)); string(got) != `{"a":1}` {
		t.Errorf("ObjectArguments(object) = %s", got)
	}
}

func TestStop(t *testing.T) {
	if Stop(model.StopEnd, true) != model.StopToolCalls || Stop(model.StopLength, true) != model.StopLength ||
		Stop(model.StopToolCalls, false) != model.StopEnd || Stop("", false) != model.StopEnd {
		t.Error("Stop mapping")
	}
}

func TestBackoff(t *testing.T) {
	for n, want := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		for range 20 {
			if d := Backoff(n); d > want || d < want*3/4 {
				t.Fatalf("Backoff(%d) = %v, want within [%v, %v]", n, d, want*3/4, want)
			}
		}
	}
}
