package httpapi_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/httpapi"
)

// png is a file an inline edit cannot carry: not UTF-8, with NULs.
const png = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"

// TestUploadVersion: POST …/skills/{id}/upload makes a new version from an
// archive, raw or as a form, with the checks and limits of the upload that
// creates a skill.
func TestUploadVersion(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		member := e.token("default", "m", "member")
		viewer := e.token("default", "v", "viewer")
		base := "/v1/workspaces/default/skills"
		sk := e.must(201, "POST", base+"/upload", member, zipOf(t, map[string]string{"charts/SKILL.md": skillMD("charts", "Draw charts."), "charts/logo.png": png}),
			"Content-Type", "application/zip")
		up := base + "/charts/upload"

		// A raw zip: version 2, with its binary file served back.
		v2 := e.must(200, "POST", up+"?message=new+logo&expected_version=1", member,
			zipOf(t, map[string]string{"charts/SKILL.md": skillMD("charts", "Draw charts, v2."), "charts/logo.png": png + "2", "charts/bin/render.sh": "\x00\x01"}),
			"Content-Type", "application/zip")
		if v2["version"] != 2.0 || v2["id"] != sk["id"] || v2["description"] != "Draw charts, v2." || v2["unchanged"] != nil {
			t.Fatalf("raw zip: %v", v2)
		}
		r := e.request("GET", base+"/charts/files/logo.png", viewer, nil)
		if r.status != 200 || string(r.body) != png+"2" {
			t.Errorf("logo.png of version 2: %d %q", r.status, r.body)
		}
		if r := e.request("GET", base+"/charts/files/bin/render.sh", viewer, nil); r.header.Get("X-Skilld-Exec") != "true" {
			t.Errorf("the executable bit did not survive: %v", r.header)
		}
		vs := e.must(200, "GET", base+"/charts/versions", viewer, nil)["items"].([]any)
		if len(vs) != 2 || vs[0].(map[string]any)["message"] != "new logo" {
			t.Errorf("versions %v", vs)
		}
		// A tar.gz as a multipart form, its options as form fields.
		body, ct := multipartBody(t, tarGzOf(t, map[string]string{"SKILL.md": skillMD("graphs", "Draw graphs."), "logo.png": png}),
			map[string]string{"name": "charts", "message": "as a form", "expected_version": "2"})
		if v3 := e.must(200, "POST", up, member, body, "Content-Type", ct); v3["version"] != 3.0 || v3["name"] != "charts" || v3["description"] != "Draw graphs." {
			t.Errorf("multipart tar.gz: %v", v3)
		}
		// The same archive again changes nothing: 200, "unchanged", no version.
		same := e.must(200, "POST", up+"?name=charts", member, tarGzOf(t, map[string]string{"SKILL.md": skillMD("graphs", "Draw graphs."), "logo.png": png}),
			"Content-Type", "application/gzip")
		if same["unchanged"] != true || same["version"] != 3.0 {
			t.Errorf("the same archive again: %v", same)
		}
	})
}

func TestUploadVersionRefused(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		member := e.token("default", "m", "member")
		viewer := e.token("default", "v", "viewer")
		base := "/v1/workspaces/default/skills"
		e.must(201, "POST", base, member, map[string]any{"files": map[string]string{"SKILL.md": skillMD("charts", "Draw charts.")}})
		up := base + "/charts/upload"
		blobs := e.blobCount()
		for _, tc := range []struct {
			name     string
			token    string
			path     string
			body     []byte
			ct       string
			status   int
			contains string
		}{
			{"a viewer", viewer, up, zipOf(t, map[string]string{"SKILL.md": skillMD("charts", "x"), "a.png": png}), "application/zip", 403, ""},
			{"not an archive type", member, up, []byte(`{"files":{}}`), "application/json", 415, "is not an archive"},
			{"another skill's archive", member, up, zipOf(t, map[string]string{"pdf/SKILL.md": skillMD("pdf", "x"), "pdf/a.png": png}), "application/zip", 422,
				`the archive holds the skill "pdf", not "charts"`},
			{"several skills", member, up, zipOf(t, map[string]string{"a/SKILL.md": skillMD("a", "x"), "b/SKILL.md": skillMD("b", "x")}), "application/zip", 422,
				"the archive holds 2 skills (a, b), not one at its root"},
			{"garbage", member, up, []byte("not an archive"), "application/octet-stream", 422, ""},
			{"a missing skill", member, base + "/nope/upload", zipOf(t, map[string]string{"SKILL.md": skillMD("nope", "x")}), "application/zip", 404, `skill "nope" not found`},
			{"a stale version", member, up + "?expected_version=5", zipOf(t, map[string]string{"SKILL.md": skillMD("charts", "x"), "b.png": png}), "application/zip", 409, "version 1, not 5"},
			{"a bad expected_version", member, up + "?expected_version=0", zipOf(t, map[string]string{"SKILL.md": skillMD("charts", "x")}), "application/zip", 422, "expected_version"},
			{"an unknown parameter", member, up + "?versoin=1", zipOf(t, map[string]string{"SKILL.md": skillMD("charts", "x")}), "application/zip", 400, "versoin"},
		} {
			r := e.request("POST", tc.path, tc.token, tc.body, "Content-Type", tc.ct)
			if r.status != tc.status || tc.contains != "" && !strings.Contains(r.errorMessage(t), tc.contains) {
				t.Errorf("%s: %d %s, want %d and %q", tc.name, r.status, r.body, tc.status, tc.contains)
			}
		}
		// The hostile corpus is refused as it is by the upload that creates.
		paths := hostileCorpus(t)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r := e.request("POST", up, member, data, "Content-Type", "application/octet-stream")
			if r.status < 400 || r.status >= 500 {
				t.Errorf("%s: status %d: %s", filepath.Base(p), r.status, r.body)
			} else if msg := r.errorMessage(t); len(msg) < 10 || strings.Contains(msg, "internal") {
				t.Errorf("%s: unclear message %q", filepath.Base(p), msg)
			}
		}
		if got := e.blobCount(); got != blobs {
			t.Errorf("refused uploads left %d blob files", got-blobs)
		}
		if sk := e.must(200, "GET", base+"/charts", viewer, nil); sk["version"] != 1.0 {
			t.Errorf("refused uploads made a version: %v", sk)
		}
		// A declared body over the limit is refused before it is read.
		req, _ := http.NewRequestWithContext(t.Context(), "POST", e.srv.URL+up, &endless{httpapi.MaxArchiveBody + 1})
		req.ContentLength = httpapi.MaxArchiveBody + 1
		req.Header.Set("Authorization", "Bearer "+member)
		req.Header.Set("Content-Type", "application/zip")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("a body over the limit: %d", resp.StatusCode)
			}
		}
	})
}

// TestUnchangedOverHTTP: an edit, an update or a publish that changes
// nothing answers what is there with "unchanged": true, and publishing
// answers 200 instead of 201 since nothing was created.
func TestUnchangedOverHTTP(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		member := e.token("default", "m", "member")
		base := "/v1/workspaces/default/skills"
		files := map[string]string{"SKILL.md": skillMD("notes", "Take notes."), "run.sh": "#!/bin/sh\necho hi\n"}
		e.must(201, "POST", base, member, map[string]any{"files": files})
		same := e.must(200, "PUT", base+"/notes/files", member, map[string]any{"files": files, "expected_version": 1})
		if same["unchanged"] != true || same["version"] != 1.0 {
			t.Errorf("identical PUT: %v", same)
		}
		same = e.must(200, "POST", base+"/notes/upload", member, zipOf(t, map[string]string{"notes/SKILL.md": files["SKILL.md"], "notes/run.sh": files["run.sh"]}),
			"Content-Type", "application/zip")
		if same["unchanged"] != true || same["version"] != 1.0 {
			t.Errorf("identical upload: %v", same)
		}
		if vs := e.must(200, "GET", base+"/notes/versions", member, nil)["items"].([]any); len(vs) != 1 {
			t.Errorf("%d versions after identical edits", len(vs))
		}
		if v2 := e.must(200, "PUT", base+"/notes/files", member, map[string]any{"files": map[string]string{"SKILL.md": skillMD("notes", "v2")}}); v2["unchanged"] != nil || v2["version"] != 2.0 {
			t.Errorf("a real edit: %v", v2)
		}

		e.must(201, "POST", "/v1/catalog/registries", e.admin, map[string]any{"name": "acme", "trust": "community"})
		lint := zipOf(t, map[string]string{"lint/SKILL.md": skillMD("lint", "Lint.")})
		e.must(201, "POST", "/v1/catalog/registries/acme/items", e.admin, lint, "Content-Type", "application/zip")
		again := e.must(200, "POST", "/v1/catalog/registries/acme/items", e.admin, lint, "Content-Type", "application/zip")
		if again["unchanged"] != true || again["version"] != 1.0 || again["latest_version"] != 1.0 {
			t.Errorf("identical publish: %v", again)
		}
		e.must(201, "POST", base+"/install", member, map[string]any{"item": "acme/lint"})
		up := e.must(200, "POST", base+"/lint/update", e.admin, map[string]any{})
		if up["unchanged"] != true || up["version"] != 1.0 {
			t.Errorf("update to the installed version: %v", up)
		}
		r := e.request("GET", base+"/notes/versions/99", member, nil)
		if r.status != 404 || r.errorMessage(t) != `version 99 of skill "notes" not found (it has 2 versions)` {
			t.Errorf("a missing version: %d %s", r.status, r.body)
		}
	})
}
