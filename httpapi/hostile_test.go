package httpapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileArchives uploads every archive of the pack's hostile corpus:
// each is refused with a 4xx and a message naming the problem, and nothing
// is stored — no skill row, no blob, no temp file.
func TestHostileArchives(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		member := e.token("default", "m", "member")
		e.must(201, "POST", "/v1/catalog/registries", e.admin, map[string]any{"name": "acme", "trust": "community"})
		paths := hostileCorpus(t)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(p)
			for _, route := range []string{"/v1/workspaces/default/skills/upload", "/v1/catalog/registries/acme/items"} {
				token := member
				if strings.Contains(route, "catalog") {
					token = e.admin
				}
				r := e.request("POST", route, token, data, "Content-Type", "application/octet-stream")
				if r.status < 400 || r.status >= 500 {
					t.Errorf("%s → %s: status %d: %s", name, route, r.status, r.body)
					continue
				}
				if msg := r.errorMessage(t); len(msg) < 10 || strings.Contains(msg, "internal") {
					t.Errorf("%s: unclear message %q", name, msg)
				}
			}
		}
		if n := e.blobCount(); n != 0 {
			t.Errorf("%d blob files stored by refused uploads", n)
		}
		if l := e.must(200, "GET", "/v1/workspaces/default/skills", member, nil); l["total"] != 0.0 {
			t.Errorf("skills stored by refused uploads: %v", l)
		}
		if l := e.must(200, "GET", "/v1/catalog/items", member, nil); l["total"] != 0.0 {
			t.Errorf("catalog items stored by refused publishes: %v", l)
		}
	})
}

// TestHostileRequests sends malformed, oversized and out-of-range requests:
// each gets the right 4xx and the JSON error body, and nothing is stored.
func TestHostileRequests(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := e.token("default", "m", "member")
	skills := "/v1/workspaces/default/skills"
	valid := `{"files":{"SKILL.md":"---\nname: ok\ndescription: fine\n---\n"}}`
	big := `{"files":{"SKILL.md":"` + strings.Repeat("a", 9<<20) + `"}}`
	for _, c := range []struct {
		name, method, path, body, ct string
		status                       int
		contains                     string
	}{
		{"malformed JSON", "POST", skills, `{"files": {`, "", 400, "malformed JSON"},
		{"JSON syntax error", "POST", skills, `{"files" 1}`, "", 400, "malformed JSON at byte"},
		{"unknown field", "POST", skills, `{"files":{},"nmae":"x"}`, "", 400, `unknown field "nmae"`},
		{"wrong type", "POST", skills, `{"files":["SKILL.md"]}`, "", 400, `"files" must be an object`},
		{"not an object", "POST", skills, `[1,2]`, "", 400, "must be a JSON object"},
		{"two values", "POST", skills, valid + `{}`, "", 400, "exactly one JSON object"},
		{"invalid UTF-8", "POST", skills, "{\"files\":{\"SKILL.md\":\"\xff\xfe\"}}", "", 400, "not valid UTF-8"},
		{"path field in body", "PUT", skills + "/x/files", `{"id":"other","files":{}}`, "", 400, "belongs in the URL"},
		{"oversized JSON", "POST", skills, big, "", 413, "8 MiB"},
		{"page_size 1000", "GET", skills + "?page_size=1000", "", "", 422, "page_size"},
		{"page -1", "GET", skills + "?page=-1", "", "", 422, "page"},
		{"page not a number", "GET", skills + "?page=abc", "", "", 400, "must be an integer"},
		{"unknown query parameter", "GET", skills + "?pagesize=10", "", "", 400, "unknown query parameter"},
		{"repeated query parameter", "GET", skills + "?page=1&page=2", "", "", 400, "given 2 times"},
		{"invalid UTF-8 in query", "GET", skills + "?search=%ff", "", "", 400, "UTF-8"},
		{"bad source type", "GET", skills + "?source_type=ftp", "", "", 422, "source_type"},
		{"form-encoded upload", "POST", skills + "/upload", "a=b", "application/x-www-form-urlencoded", 415, "multipart/form-data"},
		{"multipart without file", "POST", skills + "/upload", "--XX\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--XX--\r\n", "multipart/form-data; boundary=XX", 400, `no "file" field`},
		{"multipart unknown field", "POST", skills + "/upload", "--XX\r\nContent-Disposition: form-data; name=\"bogus\"\r\n\r\nx\r\n--XX--\r\n", "multipart/form-data; boundary=XX", 400, "unknown form field"},
		{"empty archive", "POST", skills + "/upload", "", "application/zip", 422, "empty"},
		{"traversal", "GET", skills + "/x/files/../../../../etc/passwd", "", "", 400, ".."},
		{"encoded traversal", "GET", skills + "/x/files/..%2F..%2F..%2Fetc%2Fpasswd", "", "", 400, ".."},
		{"dot-encoded traversal", "GET", skills + "/x/files/%2e%2e/%2e%2e/etc/passwd", "", "", 400, ".."},
		{"double slash", "GET", skills + "//x", "", "", 400, "//"},
		{"unknown route", "GET", "/v1/nothing", "", "", 404, "no route"},
		{"wrong method", "PATCH", skills, "", "", 405, "not allowed"},
		{"version not a number", "GET", skills + "/x/versions/one", "", "", 400, "must be an integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body any
			headers := []string{}
			if c.body != "" || c.ct != "" {
				body = []byte(c.body)
				headers = append(headers, "Content-Type", c.ct)
			}
			r := e.request(c.method, c.path, m, body, headers...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if msg := r.errorMessage(t); !strings.Contains(msg, c.contains) {
				t.Errorf("message %q lacks %q", msg, c.contains)
			}
		})
	}

	// A real skill's files cannot be escaped either: the file route only
	// ever serves paths of the package.
	sk := e.must(201, "POST", skills, m, []byte(valid), "Content-Type", "application/json")
	for _, p := range []string{"..%2Fskilld.db", "%2Fetc%2Fpasswd", "SKILL.md%00", "./SKILL.md"} {
		r := e.request("GET", skills+"/"+sk["id"].(string)+"/files/"+p, m, nil)
		if r.status != 400 && r.status != 404 {
			t.Errorf("files/%s: status %d: %s", p, r.status, r.body)
		}
	}

	// Bodies over the limit without a declared length are cut off while
	// they stream, with the same 413.
	for _, c := range []struct {
		path, ct string
		size     int64
	}{
		{skills, "application/json", 9 << 20},
		{skills + "/upload", "application/zip", 65 << 20},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", e.srv.URL+c.path, io.MultiReader(strings.NewReader(`{"files":"`), io.LimitReader(zeros{}, c.size)))
		req.Header.Set("Authorization", "Bearer "+m)
		req.Header.Set("Content-Type", c.ct)
		req.ContentLength = -1
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatalf("streaming %d bytes to %s: %v", c.size, c.path, err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.checkContract(req, nil, resp, data) // the body never arrived whole: the answer is what counts
		if resp.StatusCode != 413 || !bytes.Contains(data, []byte("too_large")) {
			t.Errorf("chunked %d bytes to %s: %d %s", c.size, c.path, resp.StatusCode, data)
		}
	}
	// A declared length over the limit is refused before a byte is read.
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/zip\r\nContent-Length: %d\r\n\r\n", skills, m, 100<<20)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 413 {
		t.Errorf("declared 100 MiB, sent nothing: %v %v", resp, err)
	}
	if l := e.must(200, "GET", skills, m, nil); l["total"] != 1.0 {
		t.Errorf("hostile requests stored skills: %v", l)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// hostileCorpus lists the archives of pack/testdata/hostile, each built to
// break an archive reader.
func hostileCorpus(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../pack/testdata/hostile/*")
	if err != nil || len(paths) < 20 {
		t.Fatalf("hostile corpus: %v (%d files)", err, len(paths))
	}
	return paths
}

// TestDuplicateKeysRefused: a body naming a key twice in one object is 400
// naming the key's path, in the message and in the error's field, and
// nothing is stored.
func TestDuplicateKeysRefused(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	m := e.token("default", "m", "member")
	for _, c := range []struct{ path, body, field string }{
		{"/v1/workspaces/default/skills", `{"files":{"SKILL.md":"---\nname: a\ndescription: d\n---\n","SKILL.md":"---\nname: b\ndescription: d\n---\n"}}`, `files["SKILL.md"]`},
		{"/v1/workspaces/default/agents", `{"name":"bot","config":{"model":"test:m","context":{"window":1000,"window":2000}}}`, "config.context.window"},
		{"/v1/workspaces/default/agents", `{"name":"bot","name":"other"}`, "name"},
	} {
		r := e.request("POST", c.path, m, []byte(c.body), "Content-Type", "application/json")
		if r.status != 400 || r.errorCode(t) != "invalid" || r.errorField(t) != c.field || !strings.Contains(r.errorMessage(t), "more than once") {
			t.Errorf("%s: %d %s; want 400 naming %s", c.body, r.status, r.body, c.field)
		}
	}
	if l := e.must(200, "GET", "/v1/workspaces/default/skills", m, nil); l["total"] != 0.0 {
		t.Errorf("a refused body stored a skill: %v", l)
	}
}
