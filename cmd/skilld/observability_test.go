package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/httpapi"
)

func TestTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://collector:4318":           "http://collector:4318/v1/traces",
		"http://collector:4318/":          "http://collector:4318/v1/traces",
		"https://otel.example.com/custom": "https://otel.example.com/custom",
	} {
		if got := tracesURL(in); got != want {
			t.Errorf("tracesURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestObsFlags(t *testing.T) {
	for _, f := range []obsFlags{{logFlags: logFlags{format: "xml"}}, {logFlags: logFlags{format: "text"}, otlpEndpoint: "collector:4318"}} {
		if f.check() == nil {
			t.Errorf("%+v passed the check", f)
		}
	}
	f := obsFlags{logFlags: logFlags{format: "json"}}
	if err := f.check(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	f.logger(&buf).InfoContext(httpapi.ContextWithRequestID(context.Background(), "r1"), "hello")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["msg"] != "hello" || line["request_id"] != "r1" {
		t.Errorf("log line %s (%v)", buf.String(), err)
	}
	obs, err := f.open(context.Background(), nil, "skilld-test")
	if err != nil || obs.metrics != nil || obs.tracer != nil || obs.apiMetrics() != nil || len(obs.observer().(executor.Observers)) != 0 {
		t.Errorf("%+v, %v", obs, err)
	}
}
