package httpapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// agentCardSchema compiles the AgentCard definition of the A2A
// specification's JSON Schema (vendored in testdata/a2a).
func agentCardSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/a2a/a2a-agentcard.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("https://a2a-protocol.org/a2a.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("https://a2a-protocol.org/a2a.json#/definitions/AgentCard")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validCard checks a served card against the A2A schema and decodes it.
func validCard(t *testing.T, sch *jsonschema.Schema, body []byte) map[string]any {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the card is not JSON: %v\n%s", err, body)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("the card breaks the A2A schema: %v\n%s", err, body)
	}
	var card map[string]any
	json.Unmarshal(body, &card)
	return card
}

func cardSkillNames(card map[string]any) []string {
	var names []string
	for _, s := range card["skills"].([]any) {
		names = append(names, s.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	return names
}

// TestAgentCard: a viewer reads an agent's A2A card; it validates against
// the A2A specification's schema, lists the attached skills the install
// policy does not withhold (asked again on every read), and points at the
// agent's task endpoint. No token is 401, another agent's name 404.
func TestAgentCard(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	sch := agentCardSchema(t)
	base := "/v1/workspaces/default"
	viewer := e.token("default", "viewer", "viewer")

	e.must(201, "POST", "/v1/catalog/registries", e.admin, map[string]any{"name": "acme", "trust": "community"})
	e.must(201, "POST", "/v1/catalog/registries/acme/items", e.admin,
		zipOf(t, map[string]string{"SKILL.md": skillMD("fmt", "Format code.")}), "Content-Type", "application/zip")
	csv := e.must(201, "POST", base+"/skills", e.admin, map[string]any{"files": map[string]string{
		"SKILL.md": skillMD("csv-inspector", "Inspect CSV files.")}})
	ag := e.must(201, "POST", base+"/agents", e.admin, map[string]any{"name": "analyst",
		"config": map[string]any{"instruction": "Answer questions about data files.\n\nAlways cite the file.", "model": "m"},
		"skills": []any{map[string]any{"skill": csv["id"]}, map[string]any{"item": "acme/fmt"}}})
	cardPath := base + "/agents/" + ag["id"].(string) + "/.well-known/agent-card.json"

	r := e.request("GET", cardPath, viewer, nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("card: %d %s", r.status, r.body)
	}
	card := validCard(t, sch, r.body)
	if got := cardSkillNames(card); !slices.Equal(got, []string{"csv-inspector", "fmt"}) {
		t.Errorf("skills before the deny rule: %v", got)
	}
	wsID := csv["workspace_id"].(string)
	if card["name"] != "analyst" || card["description"] != "Answer questions about data files." || card["protocolVersion"] != "0.3.0" ||
		card["url"] != e.srv.URL+"/v1/workspaces/"+wsID+"/agents/"+ag["id"].(string)+"/tasks" || card["version"] == "" {
		t.Errorf("card: %s", r.body)
	}
	bearer, _ := card["securitySchemes"].(map[string]any)["bearer"].(map[string]any)
	if bearer["type"] != "http" || bearer["scheme"] != "bearer" || !strings.Contains(string(r.body), `"security":[{"bearer":[]}]`) {
		t.Errorf("card without its bearer scheme: %s", r.body)
	}
	// The schema is no rubber stamp: a card without its skills fails it.
	broken := strings.Replace(string(r.body), `"skills":`, `"skillz":`, 1)
	if inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(broken)); sch.Validate(inst) == nil {
		t.Error("a card without skills passed the A2A schema")
	}
	for _, s := range card["skills"].([]any) {
		sk := s.(map[string]any)
		if sk["name"] == "csv-inspector" && (sk["id"] != csv["id"] || sk["description"] != "Inspect CSV files." ||
			!slices.Equal(toStrings(sk["tags"]), []string{"csv", "inspector"})) {
			t.Errorf("csv-inspector on the card: %v", sk)
		}
	}

	// A rule written after the attachment withholds the catalog skill: it
	// leaves the card, as it would leave a task starting now.
	e.must(200, "PUT", base+"/policy", e.admin, map[string]any{"install_rules": []any{map[string]any{"effect": "deny", "registry": "acme"}}})
	card = validCard(t, sch, e.request("GET", cardPath, viewer, nil).body)
	if got := cardSkillNames(card); !slices.Equal(got, []string{"csv-inspector"}) {
		t.Errorf("skills after the deny rule: %v", got)
	}
	// The agent's name works as its ID does.
	if r := e.request("GET", base+"/agents/analyst/.well-known/agent-card.json", viewer, nil); r.status != 200 {
		t.Errorf("card by name: %d %s", r.status, r.body)
	}

	// An agent without instruction is described by its name, and a
	// card without skills still validates (skills is an empty list).
	bare := e.must(201, "POST", base+"/agents", e.admin, map[string]any{"name": "bare", "config": map[string]any{"model": "m"}})
	card = validCard(t, sch, e.request("GET", base+"/agents/"+bare["id"].(string)+"/.well-known/agent-card.json", viewer, nil).body)
	if card["description"] != "bare" || len(card["skills"].([]any)) != 0 {
		t.Errorf("bare agent's card: %v", card)
	}

	if r := e.request("GET", cardPath, "", nil); r.status != 401 || r.errorCode(t) != "unauthorized" {
		t.Errorf("no token: %d %s", r.status, r.body)
	}
	if r := e.request("GET", base+"/agents/nobody/.well-known/agent-card.json", viewer, nil); r.status != 404 || r.errorCode(t) != "not_found" {
		t.Errorf("unknown agent: %d %s", r.status, r.body)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
