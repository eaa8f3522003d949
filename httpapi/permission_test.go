package httpapi_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/secretkey"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
)

// TestPermissionsAPI: the permissions of a skill in the documented shape,
// before and after an admin approves its digest; an update asking for
// more is held with 409 until its digest is approved.
func TestPermissionsAPI(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	base := "/v1/workspaces/default"
	member, viewer := e.token("default", "m", "member"), e.token("default", "v", "viewer")
	e.must(201, "POST", "/v1/catalog/registries", e.admin, map[string]any{"name": "acme", "trust": "community"})
	publish := func(decl string) string {
		t.Helper()
		return e.must(201, "POST", "/v1/catalog/registries/acme/items", e.admin, zipOf(t, map[string]string{
			"fetch/SKILL.md": skillMD("fetch", "Fetch things."), "fetch/skilld.yaml": decl}), "Content-Type", "application/zip")["digest"].(string)
	}
	d1 := publish("network: [api.example.com]\nsecrets: [API_TOKEN]\n")
	id := e.must(201, "POST", base+"/skills/install", member, map[string]any{"item": "acme/fetch"})["id"].(string)

	perms := e.request("GET", base+"/skills/"+id+"/permissions", viewer, nil)
	var got map[string]any
	if err := json.Unmarshal(perms.body, &got); err != nil || perms.status != 200 {
		t.Fatalf("%d %s", perms.status, perms.body)
	}
	want := map[string]any{"requested": map[string]any{"network": []any{"api.example.com"}, "secrets": []any{"API_TOKEN"}},
		"approved": nil, "digest": d1, "state": "approval_needed"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("permissions %v, want %v", got, want)
	}
	if r := e.request("POST", base+"/skills/"+id+"/permissions/approve", member, map[string]any{"digest": d1}); r.status != 403 {
		t.Errorf("member approves: %d", r.status)
	}
	if r := e.request("POST", base+"/skills/"+id+"/permissions/approve", e.admin, map[string]any{"digest": "sha256:" + string(bytes.Repeat([]byte("0"), 64))}); r.status != 422 || r.errorField(t) != "digest" {
		t.Errorf("approving another digest: %d %s", r.status, r.body)
	}
	ok := e.must(200, "POST", base+"/skills/"+id+"/permissions/approve", e.admin, map[string]any{"digest": d1})
	want["approved"], want["state"] = want["requested"], "approved"
	if !reflect.DeepEqual(ok, want) {
		t.Errorf("after approval: %v", ok)
	}

	d2 := publish("network: [api.example.com, more.example.com]\nsecrets: [API_TOKEN]\n")
	held := e.request("POST", base+"/skills/"+id+"/update", e.admin, map[string]any{})
	if held.status != 409 || held.errorCode(t) != "conflict" || held.errorField(t) != "permissions" {
		t.Fatalf("update asking for more: %d %s", held.status, held.body)
	}
	if v := e.must(200, "GET", base+"/skills/"+id, viewer, nil)["catalog_version"]; v != 1.0 {
		t.Errorf("held update moved the pin to %v", v)
	}
	e.must(200, "POST", base+"/skills/"+id+"/permissions/approve", e.admin, map[string]any{"digest": d2})
	if v := e.must(200, "POST", base+"/skills/"+id+"/update", e.admin, map[string]any{})["catalog_version"]; v != 2.0 {
		t.Errorf("update after approval: version %v", v)
	}
}

// TestSecretsAPI: PUT answers 204, the list has names and times and no
// value, the stored bytes hold no value, DELETE answers 204; without a
// key PUT is 503 saying how to configure one.
func TestSecretsAPI(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	base := "/v1/workspaces/default"
	if r := e.request("PUT", base+"/secrets/API_TOKEN", e.admin, map[string]any{"value": "value"}); r.status != 503 || r.errorCode(t) != "unavailable" {
		t.Errorf("keyless put: %d %s", r.status, r.body)
	}
	key, _, err := secretkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	e.svc = service.New(e.db, e.svc.Packages().Blobs, nil, service.Config{Secrets: &secretkey.Keyring{Current: key}})
	e.serve(&httpapi.Server{})
	member := e.token("default", "m", "member")

	const value = "a-value-never-shown"
	if r := e.request("PUT", base+"/secrets/API_TOKEN", member, map[string]any{"value": value}); r.status != 403 {
		t.Errorf("member put: %d", r.status)
	}
	if r := e.request("PUT", base+"/secrets/api-token", e.admin, map[string]any{"value": value}); r.status != 422 || r.errorField(t) != "name" {
		t.Errorf("bad name: %d %s", r.status, r.body)
	}
	if r := e.request("PUT", base+"/secrets/API_TOKEN", e.admin, map[string]any{"value": value}); r.status != 204 || len(r.body) != 0 {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	list := e.request("GET", base+"/secrets", member, nil)
	if list.status != 200 || bytes.Contains(list.body, []byte(value)) {
		t.Fatalf("list: %d %s", list.status, list.body)
	}
	items := list.json(t)["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["name"] != "API_TOKEN" || items[0].(map[string]any)["updated_at"] == "" {
		t.Errorf("list: %s", list.body)
	}
	sealed, err := e.db.SecretGet(t.Context(), &store.SecretGetParams{WorkspaceID: wsID(t, e), Name: "API_TOKEN"})
	if err != nil || bytes.Contains(sealed.Ciphertext, []byte(value)) {
		t.Fatalf("stored %q, %v", sealed.Ciphertext, err)
	}
	if r := e.request("DELETE", base+"/secrets/API_TOKEN", e.admin, nil); r.status != 204 {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := e.request("DELETE", base+"/secrets/API_TOKEN", e.admin, nil); r.status != 404 {
		t.Errorf("delete again: %d %s", r.status, r.body)
	}
}

func wsID(t *testing.T, e *testEnv) string {
	t.Helper()
	for _, w := range e.must(200, "GET", "/v1/workspaces", e.admin, nil)["items"].([]any) {
		if w.(map[string]any)["name"] == "default" {
			return w.(map[string]any)["id"].(string)
		}
	}
	t.Fatal("no workspace default")
	return ""
}
