package httpapi_test

import (
	"strings"
	"testing"
)

// TestEveryNameAndNumber sends the names, numbers and strings a careless
// client or an attacker would, on every surface that takes them: each is
// refused with a 4xx naming the field, and the legitimate forms still work.
func TestEveryNameAndNumber(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		m := e.token("default", "m", "member")
		ws := "/v1/workspaces/default"
		agent := func(name string) []byte {
			return []byte(`{"name":"` + name + `","config":{"model":"m"}}`)
		}
		skill := func(desc string) string {
			return `{"files":{"SKILL.md":"---\nname: notes\ndescription: ` + desc + `\n---\nbody\n"}}`
		}
		for _, c := range []struct {
			name, method, path, token, body string
			status                          int
			field, contains                 string
		}{
			{"agent ../../etc", "POST", ws + "/agents", m, string(agent("../../etc")), 422, "name", "'/'"},
			{"agent .", "POST", ws + "/agents", m, string(agent(".")), 422, "name", `"."`},
			{"agent a/b", "POST", ws + "/agents", m, string(agent("a/b")), 422, "name", "'/'"},
			{"agent NUL", "POST", ws + "/agents", m, string(agent(`a\u0000b`)), 400, "name", "NUL"},
			{"agent bidi override", "POST", ws + "/agents", m, string(agent(`agent\u202ex`)), 422, "name", "U+202E"},
			{"agent 5000 characters", "POST", ws + "/agents", m, string(agent(strings.Repeat("a", 5000))), 422, "name", "limit is 64"},
			{"agent zero width", "POST", ws + "/agents", m, string(agent(`agent-x\u200b`)), 422, "name", "U+200B"},
			{"token ../../etc", "POST", ws + "/tokens", e.admin, `{"name":"../../etc","role":"viewer"}`, 422, "name", "'/'"},
			{"token bidi", "POST", ws + "/tokens", e.admin, `{"name":"ci\u202e","role":"viewer"}`, 422, "name", "U+202E"},
			{"workspace ..", "POST", "/v1/workspaces", e.admin, `{"name":".."}`, 422, "name", "lowercase"},
			{"workspace a/b", "POST", "/v1/workspaces", e.admin, `{"name":"a/b"}`, 422, "name", "lowercase"},
			{"registry NUL", "POST", "/v1/catalog/registries", e.admin, `{"name":"r\u0000","trust":"community"}`, 400, "name", "NUL"},
			{"registry zero width", "POST", "/v1/catalog/registries", e.admin, `{"name":"r\u200b","trust":"community"}`, 422, "name", "lowercase"},
			{"lone surrogate in a description", "POST", ws + "/skills", m, `{"files":{"SKILL.md":"---\nname: x\ndescription: d\n---\n"},"description":"bad \ud800"}`, 400, "description", "surrogate"},
			{"lone surrogate in a file", "POST", ws + "/skills", m, `{"files":{"SKILL.md":"x\udc00"}}`, 400, `files["SKILL.md"]`, "surrogate"},
			{"NUL in a SKILL.md description", "POST", ws + "/skills", m, skill(`\"a\\0b\"`), 422, "description", "U+0000"},
			{"escape in a SKILL.md description", "POST", ws + "/skills", m, skill(`\"a\\eb\"`), 422, "description", "U+001B"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := e.request(c.method, c.path, c.token, []byte(c.body), "Content-Type", "application/json")
				if r.status != c.status {
					t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
				}
				if msg := r.errorMessage(t); !strings.Contains(msg, c.contains) {
					t.Errorf("message %q lacks %q", msg, c.contains)
				}
				if f := r.errorField(t); f != c.field {
					t.Errorf("field %q, want %q (%s)", f, c.field, r.body)
				}
			})
		}

		// Names are stored normalized and unique after normalization.
		e.must(201, "POST", ws+"/agents", m, agent("agent-x"))
		if r := e.request("POST", ws+"/agents", m, agent("ａｇｅｎｔ-ｘ")); r.status != 409 {
			t.Errorf("fullwidth twin of an agent: %d %s", r.status, r.body)
		}
		e.must(201, "POST", ws+"/agents", m, agent("данные"))

		// expected_version: a version number or nothing.
		sk := e.must(201, "POST", ws+"/skills", m, []byte(skill("fine")), "Content-Type", "application/json")
		files := ws + "/skills/" + sk["id"].(string) + "/files"
		for _, v := range []string{"0", "-1", "-100"} {
			r := e.request("PUT", files, m, []byte(`{"files":{"SKILL.md":"---\nname: notes\ndescription: v2\n---\n"},"expected_version":`+v+`}`))
			if r.status != 422 || r.errorField(t) != "expected_version" {
				t.Errorf("expected_version %s: %d %s", v, r.status, r.body)
			}
		}
		e.must(200, "PUT", files, m, []byte(`{"files":{"SKILL.md":"---\nname: notes\ndescription: v2\n---\n"},"expected_version":1}`))

		// Lookalike skill names are refused, naming the skill they imitate.
		e.must(201, "POST", ws+"/skills", m, []byte(`{"files":{"SKILL.md":"---\nname: pdf-tools\ndescription: d\n---\n"}}`))
		for _, name := range []string{"pdf-tооls", "pdf-tοοls"} {
			r := e.request("POST", ws+"/skills", m, []byte(`{"files":{"SKILL.md":"---\nname: `+name+`\ndescription: d\n---\n"}}`))
			if r.status != 409 || !strings.Contains(r.errorMessage(t), `"pdf-tools"`) {
				t.Errorf("%s: %d %s", name, r.status, r.body)
			}
		}
		for _, name := range []string{"данные", "数据处理"} {
			e.must(201, "POST", ws+"/skills", m, []byte(`{"files":{"SKILL.md":"---\nname: `+name+`\ndescription: d\n---\n"}}`))
		}

		// A task's own tool policy is validated like every other.
		r := e.request("POST", ws+"/agents/agent-x/tasks", m, []byte(`{"input":"hi","tools":{"denied":["shell","[bad"]}}`))
		if r.status != 422 || r.errorField(t) != "tools.denied[1]" {
			t.Errorf("malformed task tool policy: %d %s", r.status, r.body)
		}
	})
}
