package httpapi_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld/httpapi"
)

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// discoveryEnv is a workspace "default" with a skill of its own (with an
// executable script) and one installed from registry acme, which the
// install policy then denies.
func discoveryEnv(t *testing.T) (*testEnv, string) {
	t.Helper()
	e := newEnv(t, firstDriver(t))
	base := "/v1/workspaces/default"
	e.must(201, "POST", base+"/skills/upload", e.admin, zipOf(t, map[string]string{
		"SKILL.md":      skillMD("csv-inspector", "Inspect CSV files."),
		"scripts/rc.sh": "#!/bin/sh\necho rows\n",
		"ref/FORMAT.md": "# Formats\n",
	}), "Content-Type", "application/zip")
	e.must(201, "POST", "/v1/catalog/registries", e.admin, map[string]any{"name": "acme", "trust": "community"})
	e.must(201, "POST", "/v1/catalog/registries/acme/items", e.admin,
		zipOf(t, map[string]string{"SKILL.md": skillMD("lint", "Lint code.")}), "Content-Type", "application/zip")
	e.must(201, "POST", base+"/skills/install", e.admin, map[string]any{"item": "acme/lint"})
	return e, base
}

// TestDiscoveryIndex: the index follows the discovery RFC, lists no
// withheld skill, and each digest is the SHA-256 of the bytes its URL
// serves, the same bytes on every download.
func TestDiscoveryIndex(t *testing.T) {
	e, base := discoveryEnv(t)
	viewer := e.token("default", "viewer", "viewer")
	dir := base + "/.well-known/agent-skills/"

	idx := e.must(200, "GET", dir+"index.json", viewer, nil)
	if idx["$schema"] != "https://schemas.agentskills.io/discovery/0.2.0/schema.json" || len(idx["skills"].([]any)) != 2 {
		t.Fatalf("index before the deny rule: %v", idx)
	}
	e.must(200, "PUT", base+"/policy", e.admin, map[string]any{"install_rules": []any{map[string]any{"effect": "deny", "registry": "acme"}}})
	idx = e.must(200, "GET", dir+"index.json", viewer, nil)
	skills := idx["skills"].([]any)
	if len(skills) != 1 {
		t.Fatalf("index lists a withheld skill: %v", idx)
	}
	entry := skills[0].(map[string]any)
	if entry["name"] != "csv-inspector" || entry["type"] != "archive" || entry["description"] != "Inspect CSV files." ||
		entry["url"] != "csv-inspector/archive.zip" {
		t.Errorf("entry: %v", entry)
	}
	digest := entry["digest"].(string)

	first := e.request("GET", dir+entry["url"].(string), viewer, nil)
	if first.status != 200 || first.header.Get("Content-Type") != "application/zip" || first.header.Get("ETag") != `"`+digest+`"` {
		t.Fatalf("archive: %d %v %s", first.status, first.header, first.body)
	}
	if got := sha256Digest(first.body); got != digest {
		t.Errorf("archive hashes to %s, the index says %s", got, digest)
	}
	second := e.request("GET", dir+"csv-inspector/archive.zip", viewer, nil)
	if !bytes.Equal(first.body, second.body) {
		t.Error("two downloads of the same package differ")
	}
	if again := e.must(200, "GET", dir+"index.json", viewer, nil)["skills"].([]any)[0].(map[string]any)["digest"]; again != digest {
		t.Errorf("the digest changed between two reads of the index: %v, then %v", digest, again)
	}
	if r := e.request("GET", dir+"csv-inspector/archive.zip", viewer, nil, "If-None-Match", `"`+digest+`"`); r.status != 304 {
		t.Errorf("If-None-Match: %d", r.status)
	}

	// The archive is the skill directory at its root: sorted entries, a
	// fixed time, the script executable.
	zr, err := zip.NewReader(bytes.NewReader(first.body), int64(len(first.body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: modified %v", f.Name, f.Modified)
		}
		want := "-rw-r--r--"
		if f.Name == "scripts/rc.sh" {
			want = "-rwxr-xr-x"
		}
		if f.Mode().String() != want {
			t.Errorf("%s: mode %s, want %s", f.Name, f.Mode(), want)
		}
		if f.Name == "SKILL.md" {
			rc, _ := f.Open()
			data, _ := io.ReadAll(rc)
			rc.Close()
			if string(data) != skillMD("csv-inspector", "Inspect CSV files.") {
				t.Errorf("SKILL.md in the archive: %q", data)
			}
		}
	}
	if !slices.Equal(names, []string{"SKILL.md", "ref/FORMAT.md", "scripts/rc.sh"}) {
		t.Errorf("archive entries %v", names)
	}

	// A withheld skill has no archive either, by slug or by ID.
	if r := e.request("GET", dir+"lint/archive.zip", viewer, nil); r.status != 404 || r.errorCode(t) != "not_found" {
		t.Errorf("withheld skill's archive: %d %s", r.status, r.body)
	}
	for _, p := range []string{dir + "index.json", dir + "csv-inspector/archive.zip"} {
		if r := e.request("GET", p, "", nil); r.status != 401 || r.errorCode(t) != "unauthorized" {
			t.Errorf("%s without a token: %d %s", p, r.status, r.body)
		}
	}
	if r := e.request("GET", dir+"nothing/archive.zip", viewer, nil); r.status != 404 {
		t.Errorf("unknown skill: %d %s", r.status, r.body)
	}
}

// TestPublicDiscovery: without --public-discovery the root index does not
// exist; with it, the index of workspace "default" and its archives are
// served without a token, exactly as the workspace route serves them.
func TestPublicDiscovery(t *testing.T) {
	e, base := discoveryEnv(t)
	e.must(200, "PUT", base+"/policy", e.admin, map[string]any{"install_rules": []any{map[string]any{"effect": "deny", "registry": "acme"}}})
	for _, p := range []string{httpapi.DiscoveryIndexPath, "/.well-known/agent-skills/csv-inspector/archive.zip"} {
		if r := e.request("GET", p, "", nil); r.status != 404 || r.errorCode(t) != "not_found" {
			t.Errorf("%s with public discovery off: %d %s", p, r.status, r.body)
		}
	}
	private := e.request("GET", base+"/.well-known/agent-skills/index.json", e.admin, nil)

	pub := httptest.NewServer((&httpapi.Server{Service: e.svc, Version: "test", Logger: slog.New(slog.DiscardHandler), PublicDiscovery: true}).Handler())
	t.Cleanup(pub.Close)
	on := &testEnv{t: t, srv: pub}
	idx := on.request("GET", httpapi.DiscoveryIndexPath, "", nil)
	if idx.status != 200 || !bytes.Equal(idx.body, private.body) || idx.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("public index: %d %s, the workspace's: %s", idx.status, idx.body, private.body)
	}
	entry := idx.json(t)["skills"].([]any)[0].(map[string]any)
	arch := on.request("GET", "/.well-known/agent-skills/"+entry["url"].(string), "", nil)
	if arch.status != 200 || sha256Digest(arch.body) != entry["digest"] || arch.header.Get("Content-Type") != "application/zip" {
		t.Errorf("public archive: %d, digest %s, index %v", arch.status, sha256Digest(arch.body), entry["digest"])
	}
	if r := on.request("HEAD", "/.well-known/agent-skills/csv-inspector/archive.zip", "", nil); r.status != 200 || len(r.body) != 0 ||
		r.header.Get("Content-Length") != arch.header.Get("Content-Length") {
		t.Errorf("HEAD: %d %v", r.status, r.header)
	}
	if r := on.request("GET", "/.well-known/agent-skills/lint/archive.zip", "", nil); r.status != 404 || strings.Contains(r.errorMessage(t), "policy") {
		t.Errorf("public archive of a withheld skill: %d %s", r.status, r.body)
	}
	// Other workspaces stay private: there is no public route naming one.
	if r := on.request("GET", "/v1/workspaces/default/.well-known/agent-skills/index.json", "", nil); r.status != 401 {
		t.Errorf("workspace index without a token, public discovery on: %d", r.status)
	}
}

// TestDiscoveryRenamedSkill: a skill uploaded under a name its SKILL.md
// does not say (?name=), then renamed, is listed under its stored name,
// and the SKILL.md of its archive says that name, not the file's own.
func TestDiscoveryRenamedSkill(t *testing.T) {
	e, base := discoveryEnv(t)
	viewer := e.token("default", "viewer", "viewer")
	dir := base + "/.well-known/agent-skills/"
	e.must(201, "POST", base+"/skills/upload?name=anthropic-skill-creator", e.admin,
		zipOf(t, map[string]string{"SKILL.md": skillMD("skill-creator", "Creates skills.")}), "Content-Type", "application/zip")
	for _, name := range []string{"anthropic-skill-creator", "creator-of-skills"} {
		if name != "anthropic-skill-creator" {
			e.must(200, "PATCH", base+"/skills/anthropic-skill-creator", e.admin, map[string]any{"name": name})
		}
		var entry map[string]any
		for _, s := range e.must(200, "GET", dir+"index.json", viewer, nil)["skills"].([]any) {
			if s.(map[string]any)["url"] == "anthropic-skill-creator/archive.zip" {
				entry = s.(map[string]any)
			}
		}
		if entry == nil || entry["name"] != name {
			t.Fatalf("the index lists the skill as %v, want %q", entry, name)
		}
		r := e.request("GET", dir+"anthropic-skill-creator/archive.zip", viewer, nil)
		if r.status != 200 || sha256Digest(r.body) != entry["digest"] {
			t.Fatalf("archive: %d, digest %s, index %v", r.status, sha256Digest(r.body), entry["digest"])
		}
		zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := zr.Open("SKILL.md")
		if err != nil {
			t.Fatal(err)
		}
		md, _ := io.ReadAll(rc)
		rc.Close()
		// Only the frontmatter's name changes; the body is the author's.
		if want := strings.Replace(skillMD("skill-creator", "Creates skills."), "name: skill-creator\n", "name: "+name+"\n", 1); string(md) != want {
			t.Errorf("the archive's SKILL.md is %q, want %q", md, want)
		}
	}
}
