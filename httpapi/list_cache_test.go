package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/skilld/skilld/service"
)

// The skill list is answered from bytes kept with the service's cached
// page, plain and compressed. Every answer must be what encoding the
// page afresh gives, plain or gzip, before and after each kind of change
// to the workspace (create, rename, delete, install, a new catalog
// version), never another workspace's bytes, and with its own request id.
func TestListKeptBytes(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		e.must(201, "POST", "/v1/workspaces", e.admin, map[string]any{"name": "other"})
		other := e.token("other", "viewer", "viewer")
		viewer := e.token("default", "viewer", "viewer")
		create := func(ws, name string) string {
			t.Helper()
			m := e.must(201, "POST", "/v1/workspaces/"+ws+"/skills", e.admin, map[string]any{"files": map[string]string{
				"SKILL.md": skillMD(name, "A skill with a description long enough that a page of a few is worth compressing, "+name+".")}})
			return m["id"].(string)
		}
		for i := range 6 {
			create("default", fmt.Sprintf("skill-%d", i))
		}
		for i := range 6 {
			create("other", fmt.Sprintf("elsewhere-%d", i))
		}
		fresh := e.newService(e.svc.Packages().Blobs, nil)

		// check asks for the list twice plain and twice compressed, as
		// token, and returns the plain bytes after checking all four
		// against the page a service with nothing cached encodes.
		check := func(what, ws, token, query string) []byte {
			t.Helper()
			path := "/v1/workspaces/" + ws + "/skills" + query
			var p service.ListSkillsParams
			for kv := range strings.SplitSeq(strings.TrimPrefix(query, "?"), "&") {
				if k, v, _ := strings.Cut(kv, "="); k == "page_size" {
					fmt.Sscan(v, &p.PageSize)
				}
			}
			a, err := fresh.Authenticate(t.Context(), token)
			if err == nil {
				a, err = fresh.In(t.Context(), a, ws)
			}
			if err != nil {
				t.Fatal(err)
			}
			page, err := fresh.ListSkills(t.Context(), a, p)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(page)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			ids := map[string]bool{}
			for _, enc := range []string{"identity", "gzip", "identity", "gzip"} {
				r := e.request("GET", path, token, nil, "Accept-Encoding", enc)
				if r.status != http.StatusOK {
					t.Fatalf("%s: %s: %d %s", what, enc, r.status, r.body)
				}
				body := r.body
				if enc == "gzip" {
					if r.header.Get("Content-Encoding") != "gzip" {
						t.Fatalf("%s: gzip asked, Content-Encoding %q", what, r.header.Get("Content-Encoding"))
					}
					zr, err := gzip.NewReader(bytes.NewReader(body))
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if body, err = io.ReadAll(zr); err != nil {
						t.Fatalf("%s: %v", what, err)
					}
				} else if r.header.Get("Content-Encoding") != "" {
					t.Fatalf("%s: identity asked, Content-Encoding %q", what, r.header.Get("Content-Encoding"))
				}
				if !bytes.Equal(body, want) {
					t.Fatalf("%s (%s): answered\n%s\nencoding the page afresh gives\n%s", what, enc, body, want)
				}
				if cl := r.header.Get("Content-Length"); cl != fmt.Sprint(len(r.body)) {
					t.Errorf("%s (%s): Content-Length %q for %d bytes", what, enc, cl, len(r.body))
				}
				id := r.header.Get("X-Request-Id")
				if id == "" || ids[id] {
					t.Errorf("%s (%s): request id %q again", what, enc, id)
				}
				ids[id] = true
			}
			return want
		}
		names := func(body []byte) []string {
			t.Helper()
			var page service.SkillPage
			if err := json.Unmarshal(body, &page); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, it := range page.Items {
				if it.SkillView != nil {
					out = append(out, fmt.Sprintf("%s:%v", it.Name, it.UpdateAvailable))
				}
			}
			return out
		}
		expect := func(body []byte, want ...string) {
			t.Helper()
			if got := names(body); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("listed %v, want %v", got, want)
			}
		}

		before := check("first", "default", e.admin, "")
		expect(before, "skill-0:false", "skill-1:false", "skill-2:false", "skill-3:false", "skill-4:false", "skill-5:false")
		if got := check("another member's token", "default", viewer, ""); !bytes.Equal(got, before) {
			t.Errorf("a viewer got other bytes than the admin")
		}
		expect(check("a smaller page", "default", e.admin, "?page_size=2"), "skill-0:false", "skill-1:false")
		theirs := check("the other workspace", "other", other, "")
		expect(theirs, "elsewhere-0:false", "elsewhere-1:false", "elsewhere-2:false", "elsewhere-3:false", "elsewhere-4:false", "elsewhere-5:false")
		if r := e.request("GET", "/v1/workspaces/default/skills", other, nil); r.status == http.StatusOK {
			t.Errorf("the other workspace's viewer read default's list: %s", r.body)
		}

		created := create("default", "skill-6")
		expect(check("after a create", "default", e.admin, ""),
			"skill-0:false", "skill-1:false", "skill-2:false", "skill-3:false", "skill-4:false", "skill-5:false", "skill-6:false")
		e.must(200, "PATCH", "/v1/workspaces/default/skills/"+created, e.admin, map[string]any{"name": "renamed"})
		expect(check("after a rename", "default", e.admin, ""),
			"renamed:false", "skill-0:false", "skill-1:false", "skill-2:false", "skill-3:false", "skill-4:false", "skill-5:false")
		e.must(204, "DELETE", "/v1/workspaces/default/skills/skill-0", e.admin, nil)
		expect(check("after a delete", "default", e.admin, ""),
			"renamed:false", "skill-1:false", "skill-2:false", "skill-3:false", "skill-4:false", "skill-5:false")

		e.must(201, "POST", "/v1/catalog/registries", e.admin, map[string]any{"name": "acme", "trust": "community"})
		publish := func(desc string) {
			e.must(201, "POST", "/v1/catalog/registries/acme/items", e.admin,
				zipOf(t, map[string]string{"lint/SKILL.md": skillMD("lint", desc)}), "Content-Type", "application/zip")
		}
		publish("Lint code.")
		e.must(201, "POST", "/v1/workspaces/default/skills/install", e.admin, map[string]any{"item": "acme/lint"})
		expect(check("after an install", "default", e.admin, ""),
			"lint:false", "renamed:false", "skill-1:false", "skill-2:false", "skill-3:false", "skill-4:false", "skill-5:false")
		publish("Lint code, version two.")
		expect(check("after a new catalog version", "default", e.admin, ""),
			"lint:true", "renamed:false", "skill-1:false", "skill-2:false", "skill-3:false", "skill-4:false", "skill-5:false")
		if got := check("the other workspace at the end", "other", other, ""); !bytes.Equal(got, theirs) {
			t.Errorf("the other workspace's list changed with default's")
		}
	})
}
