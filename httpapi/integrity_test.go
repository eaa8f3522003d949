package httpapi_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corruptBlob flips one byte of a stored blob behind the store's back.
func (e *testEnv) corruptBlob(t *testing.T, digest string) {
	t.Helper()
	hex := strings.TrimPrefix(digest, "sha256:")
	p := filepath.Join(e.blobDir, "sha256", hex[:2], hex[2:4], hex)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	os.Chmod(p, 0o640)
	if err := os.WriteFile(p, b, 0o440); err != nil {
		t.Fatal(err)
	}
}

// A damaged stored file is never served: no byte of it goes out, the
// answer is a typed integrity error naming the file, the log has the
// digest at error level, and uploading the same files again repairs it.
func TestDamagedBlobs(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	files := map[string]string{
		"SKILL.md":       skillMD("damaged", "A skill whose files get damaged."),
		"data/small.txt": strings.Repeat("s", 3000),
		"data/large.txt": strings.Repeat("L", 300000),
		"scripts/run.sh": "echo hi\n",
	}
	archive := zipOf(t, files)
	sk := e.must(201, "POST", "/v1/workspaces/default/skills/upload", e.admin, archive, "Content-Type", "application/zip")
	id := sk["id"].(string)
	list := e.must(200, "GET", "/v1/workspaces/default/skills/"+id+"/files", e.admin, nil)
	digests := map[string]string{}
	for _, f := range list["files"].([]any) {
		m := f.(map[string]any)
		digests[m["path"].(string)] = m["digest"].(string)
	}
	e.must(200, "PUT", "/v1/workspaces/default/skills/"+id+"/files", e.admin, map[string]any{"files": map[string]string{"SKILL.md": skillMD("damaged", "Version two.")}})
	for _, p := range []string{"data/small.txt", "data/large.txt", "SKILL.md"} {
		e.corruptBlob(t, digests[p])
	}
	for _, p := range []string{"data/small.txt", "data/large.txt"} {
		r := e.request("GET", "/v1/workspaces/default/skills/"+id+"/files/"+p+"?version=1", e.admin, nil)
		if r.status != http.StatusInternalServerError || r.errorCode(t) != "integrity" ||
			!strings.Contains(r.errorMessage(t), p) || !strings.Contains(r.errorMessage(t), "damaged") {
			t.Errorf("GET %s: %d %s", p, r.status, r.body)
		}
		if strings.Contains(string(r.body), strings.Repeat(p[5:6], 100)) || strings.Contains(string(r.body), strings.Repeat(strings.ToUpper(p[5:6]), 100)) {
			t.Errorf("GET %s: the damaged bytes were sent", p)
		}
	}
	r := e.request("GET", "/v1/workspaces/default/skills/"+id+"/content?version=1", e.admin, nil)
	if r.status != http.StatusInternalServerError || r.errorCode(t) != "integrity" || !strings.Contains(r.errorMessage(t), "SKILL.md") {
		t.Errorf("GET content: %d %s", r.status, r.body)
	}
	r = e.request("POST", "/v1/workspaces/default/skills/"+id+"/versions/1/restore", e.admin, map[string]any{})
	if r.status != http.StatusInternalServerError || r.errorCode(t) != "integrity" || !strings.Contains(r.errorMessage(t), "damaged") {
		t.Errorf("restore: %d %s", r.status, r.body)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, digests["data/large.txt"]) {
		t.Errorf("the log does not name the damaged blob:\n%s", logs)
	}
	// The same files uploaded again (in another skill) heal the stored
	// copies.
	files["SKILL.md"] = skillMD("damaged-copy", "The same files again.")
	e.must(201, "POST", "/v1/workspaces/default/skills/upload", e.admin, zipOf(t, files), "Content-Type", "application/zip")
	r = e.request("GET", "/v1/workspaces/default/skills/"+id+"/files/data/large.txt?version=1", e.admin, nil)
	if r.status != 200 || string(r.body) != files["data/large.txt"] {
		t.Errorf("after uploading again: %d, %d bytes", r.status, len(r.body))
	}
}
