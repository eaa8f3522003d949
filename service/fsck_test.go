package service_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/blob/s3blob"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// blobDriver opens a blob store for a test and reaches behind it: damage
// overwrites a blob's stored bytes, lose deletes them.
type blobDriver struct {
	name         string
	open         func(t *testing.T) blob.Store
	damage, lose func(t *testing.T, b blob.Store, digest string)
}

func blobDrivers() []blobDriver {
	fsPath := func(b blob.Store, digest string) string {
		hex := strings.TrimPrefix(digest, "sha256:")
		return filepath.Join(b.(*fsblob.Store).Root(), "sha256", hex[:2], hex[2:4], hex)
	}
	return []blobDriver{{
		name: "files",
		open: func(t *testing.T) blob.Store { return must[*fsblob.Store](t)(fsblob.New(t.TempDir())) },
		damage: func(t *testing.T, b blob.Store, digest string) {
			p := fsPath(b, digest)
			data, _ := os.ReadFile(p)
			data[10] ^= 1
			os.Chmod(p, 0o640)
			if err := os.WriteFile(p, data, 0o440); err != nil {
				t.Fatal(err)
			}
		},
		lose: func(t *testing.T, b blob.Store, digest string) {
			if err := os.Remove(fsPath(b, digest)); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "s3",
		open: func(t *testing.T) blob.Store {
			srv := s3server.Require(t)
			prefix := srv.FreshPrefix(t)
			s := must[*s3blob.Store](t)(s3blob.New(t.Context(), s3blob.Config{Bucket: srv.Bucket, Prefix: prefix, Endpoint: srv.Endpoint,
				Region: srv.Region, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, TempDir: t.TempDir()}))
			t.Cleanup(func() {
				for info, err := range s.List(context.Background(), "") {
					if err != nil {
						break
					}
					s.Delete(context.Background(), info.Digest)
				}
				s.Close()
			})
			return s
		},
		damage: func(t *testing.T, b blob.Store, digest string) {
			s := b.(*s3blob.Store)
			rc := must[io.ReadCloser](t)(s.Open(t.Context(), digest))
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil && !errors.Is(err, blob.ErrIntegrity) {
				t.Fatal(err)
			}
			data[10] ^= 1
			s3server.PutObject(t, s.ObjectKey(digest), data)
		},
		lose: func(t *testing.T, b blob.Store, digest string) {
			s3server.RemoveObject(t, b.(*s3blob.Store).ObjectKey(digest))
		},
	}}
}

// TestFsck runs fsck on every metadata driver over both blob drivers.
func TestFsck(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		for _, bd := range blobDrivers() {
			t.Run(d.Name+"/"+bd.name, func(t *testing.T) {
				t.Parallel()
				testFsck(t, d.Open, bd)
			})
		}
	}
}

func testFsck(t *testing.T, open storetest.Opener, bd blobDriver) {
	// The clock the grace period is measured on; set once the orphans'
	// times are known, because S3 keeps the times it chose.
	var clock atomic.Pointer[time.Time]
	now := func() time.Time {
		if c := clock.Load(); c != nil {
			return *c
		}
		return time.Now()
	}
	e := newEnvOn(t, open, bd.open(t), service.Config{Now: now}, nil)
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
	// Damage one blob, lose another, leave an old and a fresh orphan: the
	// fresh one stored over a second later (storage times have seconds).
	bd.damage(t, e.blobs, digest["data/a.txt"])
	bd.lose(t, e.blobs, digest["data/b.txt"])
	oldOrphan := must[blob.Info](t)(e.blobs.Put(ctx, strings.NewReader("left by a crashed upload")))
	time.Sleep(1100 * time.Millisecond)
	fresh := must[blob.Info](t)(e.blobs.Put(ctx, strings.NewReader("an upload in progress")))
	var freshAt time.Time
	for info, err := range e.blobs.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if info.Digest == fresh.Digest {
			freshAt = info.ModTime
		}
	}
	at := freshAt.Add(500 * time.Millisecond)
	clock.Store(&at)

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
	rep = must[*service.FsckReport](t)(e.svc.Fsck(ctx, e.root, service.FsckParams{Repair: true, Grace: "1s"}))
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
