package service_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// faultyBlobs fails the Put calls for which failPut returns true.
type faultyBlobs struct {
	blob.Store
	puts    atomic.Int64
	failPut func(n int64) bool
}

var errInjected = errors.New("injected failure")

func (f *faultyBlobs) Put(ctx context.Context, r io.Reader) (blob.Info, error) {
	n := f.puts.Add(1)
	if f.failPut != nil && f.failPut(n) {
		return blob.Info{}, errInjected
	}
	return f.Store.Put(ctx, r)
}

// faultyStore fails PackageCreate (inside transactions, where Packages
// calls it) when failCreate is set.
type faultyStore struct {
	store.Store
	failCreate atomic.Bool
}

// Tx hands fn a querier with the same fault.
func (f *faultyStore) Tx(ctx context.Context, fn func(q store.Querier) error) error {
	return f.Store.Tx(ctx, func(q store.Querier) error { return fn(&faultyQuerier{Querier: q, f: f}) })
}

type faultyQuerier struct {
	store.Querier
	f *faultyStore
}

func (q *faultyQuerier) PackageCreate(ctx context.Context, p *store.PackageCreateParams) (*store.PackageCreateResult, error) {
	if q.f.failCreate.Load() {
		return nil, errInjected
	}
	return q.Querier.PackageCreate(ctx, p)
}

type fixture struct {
	pkgs  *service.PackageStore
	db    *faultyStore
	blobs *faultyBlobs
}

func newFixture(t *testing.T, open storetest.Opener) *fixture {
	fs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: &faultyStore{Store: open(t)}, blobs: &faultyBlobs{Store: fs}}
	f.pkgs = &service.PackageStore{DB: f.db, Blobs: f.blobs}
	return f
}

func (f *fixture) blobList(t *testing.T) []string {
	t.Helper()
	var out []string
	for info, err := range f.blobs.List(t.Context(), "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, info.Digest)
	}
	return out
}

func makePackage(t *testing.T, files map[string]string) *pack.Package {
	t.Helper()
	var fs []pack.File
	for p, c := range files {
		fs = append(fs, pack.File{Path: p, Data: []byte(c), Exec: p == "run.sh"})
	}
	pkg, err := pack.New(fs, pack.ArchiveLimits())
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func TestPackages(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, d.Open) })
			t.Run("FailedUploadLeavesNothing", func(t *testing.T) { testFailedUpload(t, d.Open) })
			t.Run("FailedCommitLeavesNothing", func(t *testing.T) { testFailedCommit(t, d.Open) })
			t.Run("SharedBlobsSurvive", func(t *testing.T) { testSharedBlobs(t, d.Open) })
			t.Run("ConcurrentFailures", func(t *testing.T) { testConcurrentFailures(t, d.Open) })
		})
	}
}

func testRoundTrip(t *testing.T, open storetest.Opener) {
	f := newFixture(t, open)
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	pkg := makePackage(t, map[string]string{"SKILL.md": "---\nname: x\n---\n", "run.sh": "#!/bin/sh\n", "same.txt": "dup", "copy.txt": "dup", "big.bin": string(big)})
	if err := f.pkgs.Put(t.Context(), pkg, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.pkgs.Put(t.Context(), pkg, nil); err != nil {
		t.Fatalf("storing again: %v", err)
	}
	if n := len(f.blobList(t)); n != 4 {
		t.Errorf("%d blobs for 5 files with one duplicate, want 4", n)
	}
	got, err := f.pkgs.Get(t.Context(), pkg.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest() != pkg.Digest() || !slices.EqualFunc(got.Files(), pkg.Files(), func(a, b pack.File) bool {
		return a.Path == b.Path && a.Exec == b.Exec && bytes.Equal(a.Data, b.Data)
	}) {
		t.Error("package read back differs")
	}
	_, err = f.pkgs.Get(t.Context(), "sha256:"+fmt.Sprintf("%064d", 0))
	if skilld.ErrorCode(err) != skilld.ENOTFOUND {
		t.Errorf("missing package: %v", err)
	}
}

func testFailedUpload(t *testing.T, open storetest.Opener) {
	f := newFixture(t, open)
	f.blobs.failPut = func(n int64) bool { return n == 3 }
	pkg := makePackage(t, map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"})
	if err := f.pkgs.Put(t.Context(), pkg, nil); !errors.Is(err, errInjected) {
		t.Fatalf("Put = %v, want the injected failure", err)
	}
	if blobs := f.blobList(t); len(blobs) != 0 {
		t.Errorf("blobs left behind: %v", blobs)
	}
	if _, _, err := f.db.PackageGet(t.Context(), &store.PackageGetParams{Digest: pkg.Digest()}); skilld.ErrorCode(err) != skilld.ENOTFOUND {
		t.Errorf("package row left behind: %v", err)
	}
	f.blobs.failPut = nil
	if err := f.pkgs.Put(t.Context(), pkg, nil); err != nil {
		t.Fatalf("retry after the failure: %v", err)
	}
}

func testFailedCommit(t *testing.T, open storetest.Opener) {
	f := newFixture(t, open)
	f.db.failCreate.Store(true)
	pkg := makePackage(t, map[string]string{"a": "1", "b": "2"})
	if err := f.pkgs.Put(t.Context(), pkg, nil); !errors.Is(err, errInjected) {
		t.Fatalf("Put = %v, want the injected failure", err)
	}
	if blobs := f.blobList(t); len(blobs) != 0 {
		t.Errorf("blobs left behind: %v", blobs)
	}
}

// testSharedBlobs checks that a failure never deletes a blob another
// package uses.
func testSharedBlobs(t *testing.T, open storetest.Opener) {
	f := newFixture(t, open)
	first := makePackage(t, map[string]string{"shared": "same bytes", "own": "first"})
	if err := f.pkgs.Put(t.Context(), first, nil); err != nil {
		t.Fatal(err)
	}
	f.db.failCreate.Store(true)
	second := makePackage(t, map[string]string{"shared": "same bytes", "new": "second"})
	if err := f.pkgs.Put(t.Context(), second, nil); !errors.Is(err, errInjected) {
		t.Fatalf("Put = %v", err)
	}
	f.db.failCreate.Store(false)
	if n := len(f.blobList(t)); n != 2 {
		t.Errorf("%d blobs, want the first package's 2", n)
	}
	if _, err := f.pkgs.Get(t.Context(), first.Digest()); err != nil {
		t.Errorf("first package damaged: %v", err)
	}
}

// testConcurrentFailures races packages that share blobs, half of them
// failing, and checks that every committed package is complete and no blob
// is left that nothing references.
func testConcurrentFailures(t *testing.T, open storetest.Opener) {
	f := newFixture(t, open)
	var fails atomic.Int64
	// Every third upload fails.
	f.blobs.failPut = func(n int64) bool {
		if n%3 == 0 {
			fails.Add(1)
			return true
		}
		return false
	}
	const writers = 8
	var wg sync.WaitGroup
	stored := make([]*pack.Package, writers)
	for i := range writers {
		wg.Go(func() {
			for attempt := range 3 {
				pkg := makePackage(t, map[string]string{
					"shared-a": "A", "shared-b": "B",
					"own": fmt.Sprintf("writer %d attempt %d", i, attempt),
				})
				if err := f.pkgs.Put(t.Context(), pkg, nil); err == nil {
					stored[i] = pkg
				}
			}
		})
	}
	wg.Wait()
	if fails.Load() == 0 {
		t.Fatal("no failure was injected")
	}
	f.blobs.failPut = nil
	for _, pkg := range stored {
		if pkg == nil {
			continue
		}
		if _, err := f.pkgs.Get(t.Context(), pkg.Digest()); err != nil {
			t.Errorf("committed package incomplete: %v", err)
		}
	}
	all := f.blobList(t)
	used, err := f.db.BlobReferenced(t.Context(), &store.BlobReferencedParams{Digests: all})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range all {
		if !used[d] {
			t.Errorf("blob %s is referenced by no package", d)
		}
	}
}
