package httpapi_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"
)

// TestAcceptance walks the acceptance flow over HTTP, with the
// exact request shapes a client sends, on every database driver.
func TestAcceptance(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		// Workspace team-b and its tokens.
		ws := e.must(201, "POST", "/v1/workspaces", e.admin, map[string]any{"name": "team-b"})
		if ws["name"] != "team-b" || ws["id"] == "" {
			t.Fatalf("workspace: %v", ws)
		}
		tok := e.must(201, "POST", "/v1/workspaces/team-b/tokens", e.admin, map[string]any{"name": "ci", "role": "member"})
		member, _ := tok["token"].(string)
		if !strings.HasPrefix(member, "skd_") || tok["role"] != "member" {
			t.Fatalf("token: %v", tok)
		}
		// {ws} takes the ID as well as the name.
		viewer := e.must(201, "POST", "/v1/workspaces/"+ws["id"].(string)+"/tokens", e.admin, map[string]any{"name": "v", "role": "viewer"})["token"].(string)
		wsAdmin := e.token("team-b", "admin", "admin")
		base := "/v1/workspaces/team-b"

		// Create inline.
		sk := e.must(201, "POST", base+"/skills", member, map[string]any{"files": map[string]string{
			"SKILL.md": skillMD("pdf-tools", "Work with PDF files."), "scripts/run.sh": "#!/bin/sh\necho hi\n"}})
		for _, k := range []string{"id", "name", "slug", "description", "source_type", "version"} {
			if _, ok := sk[k]; !ok {
				t.Errorf("created skill lacks %q: %v", k, sk)
			}
		}
		if sk["source_type"] != "content" || sk["version"] != 1.0 || sk["slug"] != "pdf-tools" {
			t.Errorf("created skill: %v", sk)
		}
		id := sk["id"].(string)

		// Uploads: raw zip, multipart zip, raw tar.gz.
		up := e.must(201, "POST", base+"/skills/upload", member, zipOf(t, map[string]string{"zipped/SKILL.md": skillMD("zipped", "From a zip.")}), "Content-Type", "application/zip")
		if up["source_type"] != "zip" || up["name"] != "zipped" {
			t.Errorf("zip upload: %v", up)
		}
		body, ct := multipartBody(t, zipOf(t, map[string]string{"SKILL.md": skillMD("multi", "From a form.")}), map[string]string{"description": "Overridden."})
		up = e.must(201, "POST", base+"/skills/upload", member, body, "Content-Type", ct)
		if up["name"] != "multi" || up["description"] != "Overridden." {
			t.Errorf("multipart upload: %v", up)
		}
		up = e.must(201, "POST", base+"/skills/upload?name=tarred&lenient=true", member,
			tarGzOf(t, map[string]string{"x/SKILL.md": skillMD("x", "From a tar.gz.")}), "Content-Type", "application/gzip")
		if up["name"] != "tarred" {
			t.Errorf("tar.gz upload with a name override: %v", up)
		}

		// Lists and paging.
		list := e.must(200, "GET", base+"/skills", viewer, nil)
		if list["total"] != 4.0 || list["page"] != 1.0 || list["page_size"] != 50.0 || len(list["items"].([]any)) != 4 {
			t.Errorf("list: %v", list)
		}
		if strings.Contains(fmt.Sprint(list), "Instructions for") {
			t.Error("a list carries SKILL.md bodies")
		}
		list = e.must(200, "GET", base+"/skills?page=2&page_size=3", viewer, nil)
		if items := list["items"].([]any); len(items) != 1 || list["total"] != 4.0 {
			t.Errorf("page 2 of 3: %v", list)
		}
		list = e.must(200, "GET", base+"/skills?source_type=zip", viewer, nil)
		if list["total"] != 3.0 {
			t.Errorf("source_type=zip: %v", list)
		}

		// Content, files, one file with its ETag.
		c := e.must(200, "GET", base+"/skills/"+id+"/content", viewer, nil)
		if c["id"] != id || c["name"] != "pdf-tools" || !strings.Contains(c["content"].(string), "Instructions for pdf-tools") {
			t.Errorf("content: %v", c)
		}
		files := e.must(200, "GET", base+"/skills/pdf-tools/files", viewer, nil)["files"].([]any)
		if len(files) != 2 {
			t.Fatalf("files: %v", files)
		}
		run := files[1].(map[string]any)
		if run["path"] != "scripts/run.sh" || run["size"] != 18.0 || !strings.HasPrefix(run["digest"].(string), "sha256:") {
			t.Errorf("file entry: %v", run)
		}
		r := e.request("GET", base+"/skills/"+id+"/files/scripts/run.sh", viewer, nil)
		if r.status != 200 || string(r.body) != "#!/bin/sh\necho hi\n" || r.header.Get("Content-Type") != "text/x-shellscript" ||
			r.header.Get("ETag") != `"`+run["digest"].(string)+`"` || r.header.Get("X-Content-Type-Options") != "nosniff" ||
			r.header.Get("Content-Length") != "18" {
			t.Errorf("file download: %d %v %q", r.status, r.header, r.body)
		}
		r = e.request("GET", base+"/skills/"+id+"/files/scripts/run.sh", viewer, nil, "If-None-Match", r.header.Get("ETag"))
		if r.status != 304 || len(r.body) != 0 {
			t.Errorf("If-None-Match: %d %q", r.status, r.body)
		}
		r = e.request("GET", base+"/skills/"+id+"/files/SKILL.md", viewer, nil)
		if r.status != 200 || r.header.Get("Content-Type") != "text/markdown; charset=utf-8" {
			t.Errorf("SKILL.md download: %d %v", r.status, r.header)
		}

		// Edit → version 2, versions, restore → version 3.
		ed := e.must(200, "PUT", base+"/skills/"+id+"/files", member, map[string]any{"files": map[string]string{
			"SKILL.md": skillMD("pdf-tools", "Work with PDF files, better.")}, "message": "better"})
		if ed["version"] != 2.0 || ed["description"] != "Work with PDF files, better." {
			t.Errorf("edit: %v", ed)
		}
		vs := e.must(200, "GET", base+"/skills/"+id+"/versions", viewer, nil)["items"].([]any)
		if len(vs) != 2 || vs[0].(map[string]any)["number"] != 2.0 || vs[0].(map[string]any)["digest"] == "" {
			t.Errorf("versions: %v", vs)
		}
		v1 := e.must(200, "GET", base+"/skills/"+id+"/versions/1", viewer, nil)
		if v1["number"] != 1.0 || len(v1["files"].([]any)) != 2 {
			t.Errorf("version 1: %v", v1)
		}
		rs := e.must(200, "POST", base+"/skills/"+id+"/versions/1/restore", member, nil)
		if rs["version"] != 3.0 || rs["digest"] != vs[1].(map[string]any)["digest"] {
			t.Errorf("restore: %v", rs)
		}
		e.must(200, "PATCH", base+"/skills/"+id, member, map[string]any{"description": "Renamed description."})

		catalogFlow(t, e, base, member, wsAdmin)
		importFlow(t, e, base, member)

		// The refusals every client must see.
		other := e.must(201, "POST", "/v1/workspaces", e.admin, map[string]any{"name": "team-c"})
		otherTok := e.token("team-c", "m", "member")
		if r := e.request("GET", base+"/skills/"+id, otherTok, nil); r.status != 404 || r.errorCode(t) != "not_found" {
			t.Errorf("another workspace's token: %d %s", r.status, r.body)
		}
		if r := e.request("GET", "/v1/workspaces/team-c/skills/"+id, otherTok, nil); r.status != 404 {
			t.Errorf("another workspace's skill id: %d %s", r.status, r.body)
		}
		_ = other
		if r := e.request("GET", base+"/skills", "", nil); r.status != 401 || r.header.Get("WWW-Authenticate") == "" || r.errorCode(t) != "unauthorized" {
			t.Errorf("no token: %d %v %s", r.status, r.header, r.body)
		}
		if r := e.request("DELETE", base+"/skills/"+id, viewer, nil); r.status != 403 || r.errorCode(t) != "forbidden" {
			t.Errorf("viewer delete: %d %s", r.status, r.body)
		}
		e.must(204, "DELETE", base+"/skills/"+id, member, nil)
		if r := e.request("GET", base+"/skills/"+id, member, nil); r.status != 404 {
			t.Errorf("deleted skill: %d", r.status)
		}
	})
}

// catalogFlow: registry, publish, install, update, fork, agents, policy.
func catalogFlow(t *testing.T, e *testEnv, base, member, wsAdmin string) {
	t.Helper()
	e.must(201, "POST", "/v1/catalog/registries", e.admin, map[string]any{"name": "acme", "trust": "community"})
	regs := e.must(200, "GET", "/v1/catalog/registries", member, nil)["items"].([]any)
	if len(regs) != 1 {
		t.Errorf("registries: %v", regs)
	}
	pub := e.must(201, "POST", "/v1/catalog/registries/acme/items", e.admin,
		zipOf(t, map[string]string{"lint/SKILL.md": skillMD("lint", "Lint code.")}), "Content-Type", "application/zip")
	if pub["name"] != "lint" || pub["version"] != 1.0 || pub["id"] == "" {
		t.Errorf("publish: %v", pub)
	}
	e.must(201, "POST", "/v1/catalog/registries/acme/items", e.admin,
		zipOf(t, map[string]string{"SKILL.md": skillMD("fmt", "Format code.")}), "Content-Type", "application/zip")
	items := e.must(200, "GET", "/v1/catalog/items?search=lint&registry=acme", member, nil)
	if items["total"] != 1.0 {
		t.Errorf("catalog search: %v", items)
	}
	inst := e.must(201, "POST", base+"/skills/install", member, map[string]any{"item": "acme/lint"})
	if inst["update_available"] != false || inst["catalog_item"] != "acme/lint" || inst["catalog_version"] != 1.0 || inst["source_type"] != "catalog" {
		t.Errorf("install: %v", inst)
	}
	id := inst["id"].(string)
	if inst["existing"] != nil {
		t.Errorf("first install marked existing: %v", inst)
	}
	if again := e.must(200, "POST", base+"/skills/install", member, map[string]any{"item": "acme/lint"}); again["id"] != id || again["existing"] != true {
		t.Errorf("installing again: %v", again)
	}
	e.must(201, "POST", "/v1/catalog/registries/acme/items", e.admin,
		zipOf(t, map[string]string{"lint/SKILL.md": skillMD("lint", "Lint code, version two.")}), "Content-Type", "application/zip")
	if got := e.must(200, "GET", base+"/skills/"+id, member, nil); got["update_available"] != true {
		t.Errorf("after publishing v2: %v", got)
	}
	if r := e.request("POST", base+"/skills/"+id+"/update", member, map[string]any{}); r.status != 403 {
		t.Errorf("member update: %d %s", r.status, r.body)
	}
	upd := e.must(200, "POST", base+"/skills/"+id+"/update", wsAdmin, map[string]any{})
	if upd["catalog_version"] != 2.0 || upd["update_available"] != false || upd["description"] != "Lint code, version two." {
		t.Errorf("update: %v", upd)
	}
	fork := e.must(200, "PUT", base+"/skills/"+id+"/files", member, map[string]any{"files": map[string]string{
		"SKILL.md": skillMD("lint", "Our own lint.")}})
	if fork["forked"] != true || fork["update_available"] != false {
		t.Errorf("edited install: %v", fork)
	}

	// An agent with a catalog item attached (installed on the way).
	ag := e.must(201, "POST", base+"/agents", member, map[string]any{"name": "reviewer",
		"config": map[string]any{"instruction": "Review.", "model": "m"}, "skills": []any{map[string]any{"item": "acme/fmt"}}})
	agID := ag["id"].(string)
	if len(ag["skills"].([]any)) != 1 {
		t.Errorf("agent: %v", ag)
	}
	e.must(200, "GET", base+"/agents/reviewer", member, nil)
	if l := e.must(200, "GET", base+"/agents", member, nil); l["total"] != 1.0 {
		t.Errorf("agents: %v", l)
	}
	if up := e.must(200, "PATCH", base+"/agents/"+agID, member, map[string]any{"name": "reviewer-2"}); up["name"] != "reviewer-2" {
		t.Errorf("agent update: %v", up)
	}
	e.must(204, "DELETE", base+"/agents/"+agID, member, nil)

	// Policy: deny the registry; a new install is refused naming the rule.
	e.must(201, "POST", "/v1/catalog/registries/acme/items", e.admin,
		zipOf(t, map[string]string{"SKILL.md": skillMD("docs", "Write docs.")}), "Content-Type", "application/zip")
	pol := e.must(200, "PUT", base+"/policy", wsAdmin, map[string]any{"install_rules": []any{map[string]any{"effect": "deny", "registry": "acme"}}})
	if len(pol["install_rules"].([]any)) != 1 {
		t.Errorf("policy: %v", pol)
	}
	e.must(200, "GET", base+"/policy", member, nil)
	r := e.request("POST", base+"/skills/install", member, map[string]any{"item": "acme/docs"})
	if r.status != 403 || !strings.Contains(r.errorMessage(t), "rule 1") || !strings.Contains(r.errorMessage(t), "acme") {
		t.Errorf("denied install: %d %s", r.status, r.body)
	}
	e.must(200, "PUT", base+"/policy", wsAdmin, map[string]any{"install_rules": []any{}})
}

// importFlow imports from the fake GitHub: one folder, then a whole
// repository, then refused by policy.
func importFlow(t *testing.T, e *testEnv, base, member string) {
	t.Helper()
	e.github.addRepo(t, "o", "r", map[string]string{
		"README.md":                   "repo",
		"skills/x-skill/SKILL.md":     skillMD("x-skill", "Imported x."),
		"skills/x-skill/scripts/a.sh": "#!/bin/sh\n",
		"skills/y/SKILL.md":           skillMD("y-skill", "Imported y."),
	})
	one := e.must(201, "POST", base+"/skills/import", member, map[string]any{"github_url": "https://github.com/o/r/tree/main/skills/x-skill"})
	if one["source_type"] != "github" || one["name"] != "x-skill" || !strings.Contains(fmt.Sprint(one["source_url"]), "github.com/o/r") {
		t.Errorf("import one: %v", one)
	}
	e.github.addRepo(t, "o", "many", map[string]string{
		"a/SKILL.md": skillMD("a", "Imported a."),
		"b/SKILL.md": skillMD("b", "Imported b."),
	})
	many := e.must(201, "POST", base+"/skills/import", member, map[string]any{"github_url": "https://github.com/o/many", "import_all": true})
	if items, _ := many["items"].([]any); len(items) != 2 {
		t.Errorf("import all: %v", many)
	}
	if r := e.request("POST", base+"/skills/import", member, map[string]any{"github_url": "https://github.com/o/missing"}); r.status != 404 {
		t.Errorf("missing repository: %d %s", r.status, r.body)
	}
	e.must(200, "PUT", base+"/policy", e.admin, map[string]any{"install_rules": []any{map[string]any{"effect": "deny", "registry": "github"}}})
	r := e.request("POST", base+"/skills/import", member, map[string]any{"github_url": "https://github.com/o/r/tree/main/skills/y"})
	if r.status != 403 || !strings.Contains(r.errorMessage(t), "rule 1") {
		t.Errorf("denied import: %d %s", r.status, r.body)
	}
	e.must(200, "PUT", base+"/policy", e.admin, map[string]any{"install_rules": []any{}})
}

// multipartBody builds a multipart/form-data body with the archive in
// "file" and the given fields.
func multipartBody(t testing.TB, archive []byte, fields map[string]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, k := range sortedKeys(fields) {
		mw.WriteField(k, fields[k])
	}
	fw, err := mw.CreateFormFile("file", "skill.zip")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(archive)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}
