package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestOpenAPIContractCatches proves the check that every test request
// goes through finds what it is for: each case takes a real exchange,
// which passes, then breaks it the way a drifting handler or document
// would, and expects a problem naming the route, the status and the fault.
func TestOpenAPIContractCatches(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	sk := e.must(201, "POST", "/v1/workspaces/default/skills", e.admin, map[string]any{
		"files": map[string]string{"SKILL.md": skillMD("pdf-tools", "Fill PDF forms."), "scripts/run.sh": "#!/bin/sh\necho hi\n"}})
	skill := "/v1/workspaces/default/skills/" + sk["id"].(string)
	auth := http.Header{"Authorization": {"Bearer " + e.admin}}
	jsonHeader := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	c := apiContract()

	get := e.request("GET", skill, e.admin, nil)
	good := exchange{method: "GET", target: skill, reqHeader: auth, status: get.status, respHeader: get.header, respBody: get.body}
	if p := c.checkExchange(good); len(p) != 0 {
		t.Fatalf("a real exchange fails: %v", p)
	}
	without := func(body []byte, field string) []byte {
		var m map[string]any
		json.Unmarshal(body, &m)
		delete(m, field)
		b, _ := json.Marshal(m)
		return b
	}
	file := e.request("GET", skill+"/files/scripts/run.sh", e.admin, nil)
	createBody := []byte(`{"files":{"SKILL.md":"x"},"nmae":"typo"}`)

	cases := []struct {
		name string
		x    exchange
		want []string // what the problem must say
	}{
		{"a required property missing", with(good, func(x *exchange) { x.respBody = without(get.body, "id") }),
			[]string{"GET /v1/workspaces/{ws}/skills/{id} → 200", "id"}},
		{"a property the schema does not have", with(good, func(x *exchange) { x.respBody = []byte(strings.Replace(string(get.body), "{", `{"bogus":1,`, 1)) }),
			[]string{"→ 200", "bogus"}},
		{"a status the route does not answer", with(good, func(x *exchange) { x.status = 202 }),
			[]string{"GET /v1/workspaces/{ws}/skills/{id} → 202", "not a documented answer"}},
		{"a content type the route does not answer", with(good, func(x *exchange) { x.respHeader = http.Header{"Content-Type": {"text/html"}} }),
			[]string{"→ 200", "text/html"}},
		{"an error that is not the error body", exchange{method: "GET", target: skill, reqHeader: auth, status: 404, respHeader: jsonHeader, respBody: []byte(`{"message":"gone"}`)},
			[]string{"→ 404", "error"}},
		{"a 401 without WWW-Authenticate", exchange{method: "GET", target: skill, status: 401, respHeader: jsonHeader,
			respBody: []byte(`{"error":{"code":"unauthorized","message":"missing token"}}`)},
			[]string{"→ 401", "WWW-Authenticate"}},
		{"a request the document refuses, accepted", exchange{method: "POST", target: "/v1/workspaces/default/skills", reqHeader: http.Header{"Authorization": auth["Authorization"], "Content-Type": {"application/json"}},
			reqBody: createBody, status: 201, respHeader: get.header, respBody: get.body},
			[]string{"POST /v1/workspaces/{ws}/skills → 201", "accepted a request the document refuses", "nmae"}},
		{"a file served with an undocumented type", exchange{method: "GET", target: skill + "/files/scripts/run.sh", reqHeader: auth, status: 200,
			respHeader: with(exchange{respHeader: file.header.Clone()}, func(x *exchange) { x.respHeader.Set("Content-Type", "text/html") }).respHeader, respBody: file.body},
			[]string{"GET /v1/workspaces/{ws}/skills/{id}/files/{path} → 200", "text/html"}},
		{"a file without its ETag", exchange{method: "GET", target: skill + "/files/scripts/run.sh", reqHeader: auth, status: 200,
			respHeader: with(exchange{respHeader: file.header.Clone()}, func(x *exchange) { x.respHeader.Del("ETag") }).respHeader, respBody: file.body},
			[]string{"→ 200", "ETag"}},
		{"no route, answered as a success", exchange{method: "GET", target: "/v1/nowhere", status: 200, respHeader: jsonHeader, respBody: []byte(`{}`)},
			[]string{"GET /v1/nowhere (no route) → 200"}},
		{"no route, not the error body", exchange{method: "GET", target: "/v1/nowhere", status: 404, respHeader: jsonHeader, respBody: []byte(`{"error":"nope"}`)},
			[]string{"(no route) → 404", "Error schema"}},
	}
	if file.status != 200 || file.header.Get("ETag") == "" {
		t.Fatalf("file download: %d %v", file.status, file.header)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			problems := strings.Join(c.checkExchange(tc.x), "\n")
			if problems == "" {
				t.Fatal("no problem found")
			}
			for _, w := range tc.want {
				if !strings.Contains(problems, w) {
					t.Errorf("the problem does not say %q:\n%s", w, problems)
				}
			}
		})
	}
}

// TestOpenAPIContractEventStream breaks a real event stream: an event
// whose data is not an entry, one without a field of its type or with a
// field its type does not have, one whose id is not its seq, one named
// as no event is.
func TestOpenAPIContractEventStream(t *testing.T) {
	c := apiContract()
	target := "/v1/workspaces/default/tasks/t1/events"
	stream := func(s string) exchange {
		return exchange{method: "GET", target: target, reqHeader: http.Header{"Authorization": {"Bearer skd_x"}}, status: 200,
			respHeader: http.Header{"Content-Type": {"text/event-stream"}}, respBody: []byte(s)}
	}
	resumed := func(seq int, fields string) string {
		return fmt.Sprintf("id: %d\nevent: task.resumed\ndata: {\"type\":\"task.resumed\",\"task_id\":\"t1\",\"seq\":1,\"time\":\"2026-01-02T03:04:05Z\"%s}\n\n", seq, fields)
	}
	ok := resumed(1, `,"replayed":4`) +
		": keepalive\n\n" +
		"event: error\ndata: {\"code\":\"unauthorized\",\"message\":\"token revoked\"}\n\n"
	if p := c.checkExchange(stream(ok)); len(p) != 0 {
		t.Fatalf("a good stream fails: %v", p)
	}
	for name, tc := range map[string]struct{ stream, want string }{
		"data not an entry":           {"id: 1\nevent: task.started\ndata: {\"type\":\"task.started\",\"task_id\":\"t1\"}\n\n", "breaks TaskEvent"},
		"a field of its type missing": {resumed(1, ""), "breaks TaskEvent"},
		"a field not of its type":     {resumed(1, `,"replayed":4,"output":"x"`), "breaks TaskEvent"},
		"id not its seq":              {resumed(2, `,"replayed":4`), "seq 1"},
		"error not an ErrorObject":    {"event: error\ndata: {\"code\":\"unauthorized\"}\n\n", "breaks ErrorObject"},
		"no data":                     {"id: 1\nevent: task.started\n\n", "has no data"},
	} {
		t.Run(name, func(t *testing.T) {
			problems := strings.Join(c.checkExchange(stream(tc.stream)), "\n")
			if !strings.Contains(problems, "GET /v1/workspaces/{ws}/tasks/{id}/events → 200") || !strings.Contains(problems, tc.want) {
				t.Errorf("want a problem saying %q, got:\n%s", tc.want, problems)
			}
		})
	}
}

// with returns a copy of x changed by change; headers are copied first.
func with(x exchange, change func(*exchange)) exchange {
	x.respHeader = x.respHeader.Clone()
	change(&x)
	return x
}
