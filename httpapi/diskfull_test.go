package httpapi_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/internal/headroom"
	"github.com/skilld/skilld/store/sqlitestore"
)

// TestDiskFull: with the data folder's file system full, uploads are
// answered 503 with Retry-After and a message saying the disk is full —
// never 500 internal — and /healthz says "degraded" naming the folder;
// once space is freed both recover, and what was stored before is intact.
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system for the data folder takes root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=8m"); err != nil {
		t.Fatalf("mounting a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	db, err := sqlitestore.Open(t.Context(), filepath.Join(dir, "skilld.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobs := filepath.Join(dir, "blobs")
	e := newEnvIn(t, db, blobs)
	room := &headroom.Monitor{Paths: map[string]string{"data": dir}, MinFreeDisk: 1 << 20}
	e.serve(&httpapi.Server{Degraded: room.Degraded})

	upload := func(name string, size int) response {
		raw := make([]byte, size)
		rand.Read(raw)
		return e.request("POST", "/v1/workspaces/default/skills", e.admin, map[string]any{"files": map[string]string{
			"SKILL.md": fmt.Sprintf("---\nname: %s\ndescription: Holds data that does not compress.\n---\nRead data.txt.\n", name),
			"data.txt": base64.StdEncoding.EncodeToString(raw)}})
	}
	health := func() map[string]any {
		r := e.request("GET", "/healthz", "", nil)
		var body map[string]any
		if r.status != 200 || json.Unmarshal(r.body, &body) != nil {
			t.Fatalf("/healthz: %d %s", r.status, r.body)
		}
		return body
	}
	if r := upload("before", 64<<10); r.status != 201 {
		t.Fatalf("upload with room: %d %s", r.status, r.body)
	}
	if h := health(); h["status"] != "ok" {
		t.Fatalf("/healthz with room: %v", h)
	}

	// Fill the file system but for a little.
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := filler.Write(chunk); err != nil {
			break
		}
	}
	filler.Close()
	var refused response
	for i := range 5 {
		r := upload(fmt.Sprintf("full-%d", i), 256<<10)
		if r.status == 500 {
			t.Fatalf("a full disk answered 500: %s", r.body)
		}
		if r.status != 201 {
			refused = r
			break
		}
	}
	if refused.status != 503 || refused.header.Get("Retry-After") == "" || !strings.Contains(string(refused.body), "the disk is full") {
		t.Fatalf("an upload onto a full disk: %d %q %s", refused.status, refused.header.Get("Retry-After"), refused.body)
	}
	// The database's writes too (SQLite's "database or disk is full").
	for i := range 200 {
		r := e.request("POST", "/v1/workspaces/default/agents", e.admin, map[string]any{"name": fmt.Sprintf("a%d", i),
			"config": map[string]any{"instruction": strings.Repeat(fmt.Sprintf("%d ", i), 4000)}})
		if r.status == 201 {
			continue
		}
		if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "disk is full") {
			t.Errorf("a database write onto a full disk: %d %s", r.status, r.body)
		}
		break
	}
	h := health()
	if reasons, _ := h["degraded"].([]any); h["status"] != "degraded" || len(reasons) != 1 || !strings.Contains(reasons[0].(string), "the data folder's file system has") {
		t.Errorf("/healthz on a full disk: %v", h)
	}

	os.Remove(filepath.Join(dir, "filler"))
	if r := upload("after", 256<<10); r.status != 201 {
		t.Errorf("upload once space is freed: %d %s", r.status, r.body)
	}
	if h := health(); h["status"] != "ok" {
		t.Errorf("/healthz once space is freed: %v", h)
	}
	if r := e.request("GET", "/v1/workspaces/default/skills/before/files/data.txt", e.admin, nil); r.status != 200 {
		t.Errorf("a skill stored before the disk filled: %d %s", r.status, r.body)
	}
}
