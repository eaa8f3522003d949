package service_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// blobPath is where fsblob keeps a blob.
func blobPath(e *env, digest string) string {
	hex := strings.TrimPrefix(digest, "sha256:")
	return filepath.Join(e.blobs.(*fsblob.Store).Root(), "sha256", hex[:2], hex[2:4], hex)
}

func TestFsck(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) { testFsck(t, d.Open) })
	}
}

func testFsck(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	sk := must[*service.SkillView](t)(e.svc.CreateSkill(ctx, e.member, service.CreateSkillParams{Files: map[string]string{
		"SKILL.md": skillMD("checked", "A skill fsck checks."), "data/a.txt": strings.Repeat("a", 3000), "data/b.txt": strings.Repeat("b", 4000)}}))
	files := must[*service.SkillFiles](t)(e.svc.ListSkillFiles(ctx, e.member, service.ListSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID}}))
	digest := map[string]string{}
	for _, f := range files.Files {
		digest[f.Path] = f.Digest
	}
	// A clean store first.
	rep := must[*service.FsckReport](t)(e.svc.Fsck(ctx, e.root, service.FsckParams{}))
	if !rep.OK() || rep.Blobs != 3 || rep.Packages != 1 || len(rep.Unreferenced) != 0 {
		t.Fatalf("clean store: %+v", rep)
	}
	// Damage one blob, lose another, leave an old and a fresh orphan.
	p := blobPath(e, digest["data/a.txt"])
	b, _ := os.ReadFile(p)
	b[10] ^= 1
	os.Chmod(p, 0o640)
	os.WriteFile(p, b, 0o440)
	os.Remove(blobPath(e, digest["data/b.txt"]))
	oldOrphan := must[blob.Info](t)(e.blobs.Put(ctx, strings.NewReader("left by a crashed upload")))
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(blobPath(e, oldOrphan.Digest), old, old)
	fresh := must[blob.Info](t)(e.blobs.Put(ctx, strings.NewReader("an upload in progress")))

	rep = must[*service.FsckReport](t)(e.svc.Fsck(ctx, e.root, service.FsckParams{}))
	if rep.OK() || len(rep.Damaged) != 1 || rep.Damaged[0].Digest != digest["data/a.txt"] || !strings.Contains(rep.Damaged[0].UsedBy[0], "data/a.txt") {
		t.Errorf("damaged: %+v", rep.Damaged)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].Digest != digest["data/b.txt"] || !strings.Contains(rep.Missing[0].UsedBy[0], "data/b.txt") {
		t.Errorf("missing: %+v", rep.Missing)
	}
	if len(rep.Unreferenced) != 2 || len(rep.Removed) != 0 {
		t.Errorf("unreferenced %+v, removed %v", rep.Unreferenced, rep.Removed)
	}
	// Repair removes the old orphan only; never a blob a package needs.
	rep = must[*service.FsckReport](t)(e.svc.Fsck(ctx, e.root, service.FsckParams{Repair: true, Grace: "1h"}))
	if len(rep.Removed) != 1 || rep.Removed[0] != oldOrphan.Digest {
		t.Errorf("removed %v, want only %s", rep.Removed, oldOrphan.Digest)
	}
	if _, err := e.blobs.Stat(ctx, fresh.Digest); err != nil {
		t.Errorf("the fresh orphan was removed: %v", err)
	}
	if _, err := e.blobs.Stat(ctx, digest["SKILL.md"]); err != nil {
		t.Errorf("a package's blob was removed: %v", err)
	}
	// Only instance admins, and a bad grace is refused by name.
	_, err := e.svc.Fsck(ctx, e.admin, service.FsckParams{})
	wantCode(t, err, skilld.EFORBIDDEN)
	_, err = e.svc.Fsck(ctx, e.root, service.FsckParams{Grace: "soon"})
	wantCode(t, err, skilld.EINVALID)
}

// BenchmarkFsck checks a store of 1,000 blobs of 5 KiB and 20 of 1 MiB
// (25 MiB) on SQLite and the local file system.
func BenchmarkFsck(b *testing.B) {
	fs, err := fsblob.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	db := storetest.OpenSQLite(b)
	svc := service.New(db, fs, nil, service.Config{})
	secret, _ := svc.Bootstrap(b.Context(), "")
	root, _ := svc.Authenticate(b.Context(), secret)
	var total int64
	put := func(i, size int) {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(i*31 + j*7)
		}
		copy(data, fmt.Sprint(i))
		info, err := fs.Put(b.Context(), bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		total += info.Size
	}
	for i := range 1000 {
		put(i, 5<<10)
	}
	for i := range 20 {
		put(10000+i, 1<<20)
	}
	b.SetBytes(total)
	for b.Loop() {
		rep, err := svc.Fsck(b.Context(), root, service.FsckParams{})
		if err != nil || rep.Blobs != 1020 {
			b.Fatal(rep, err)
		}
	}
	b.ReportMetric(float64(1020*b.N)/b.Elapsed().Seconds(), "blobs/s")
}
