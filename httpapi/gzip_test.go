package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// JSON answers are gzip-compressed when the client asks and they are worth
// it; files and small answers are not, and q=0 is a refusal.
func TestGzip(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	for i := range 20 {
		e.must(http.StatusCreated, "POST", "/v1/workspaces/default/skills", e.admin, map[string]any{"files": map[string]string{
			"SKILL.md": fmt.Sprintf("---\nname: gz-%02d\ndescription: A skill long enough to make the list worth compressing, number %d.\n---\nBody.\n", i, i)}})
	}
	plain := e.request("GET", "/v1/workspaces/default/skills", e.admin, nil, "Accept-Encoding", "identity")
	if plain.status != http.StatusOK || plain.header.Get("Content-Encoding") != "" {
		t.Fatalf("identity: %d %q", plain.status, plain.header.Get("Content-Encoding"))
	}
	gz := e.request("GET", "/v1/workspaces/default/skills", e.admin, nil, "Accept-Encoding", "br;q=1.0, gzip;q=0.8")
	if gz.header.Get("Content-Encoding") != "gzip" || gz.header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip asked: Content-Encoding %q, Vary %q", gz.header.Get("Content-Encoding"), gz.header.Get("Vary"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.body))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(body, plain.body) {
		t.Fatalf("the compressed answer is not the plain one (%v)", err)
	}
	t.Logf("%d bytes plain, %d gzip", len(plain.body), len(gz.body))
	if len(gz.body) >= len(plain.body) {
		t.Errorf("compressed %d bytes, plain %d", len(gz.body), len(plain.body))
	}
	if r := e.request("GET", "/v1/workspaces/default/skills", e.admin, nil, "Accept-Encoding", "gzip;q=0"); r.header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 got %q", r.header.Get("Content-Encoding"))
	}
	if r := e.request("GET", "/v1/workspaces/default/skills/gz-01", e.admin, nil, "Accept-Encoding", "gzip"); r.header.Get("Content-Encoding") != "" {
		t.Errorf("a small answer was compressed")
	}
	if r := e.request("GET", "/v1/workspaces/default/skills/gz-01/files/SKILL.md", e.admin, nil, "Accept-Encoding", "gzip"); r.status != http.StatusOK || r.header.Get("Content-Encoding") != "" {
		t.Errorf("a file download: %d, Content-Encoding %q", r.status, r.header.Get("Content-Encoding"))
	}
}
