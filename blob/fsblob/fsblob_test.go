package fsblob_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/blobtest"
	"github.com/skilld/skilld/blob/fsblob"
)

func TestMain(m *testing.M) {
	// The crash test re-runs this binary as the process it kills.
	if root := os.Getenv(crashChildEnv); root != "" {
		crashChild(root)
		return
	}
	os.Exit(m.Run())
}

func open(t *testing.T) blob.Store {
	s, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, open, blobtest.Options{
		Corrupt:   func(t *testing.T, s blob.Store, digest string) { corruptAt(t, s.(*fsblob.Store).Root(), digest) },
		TempFiles: func(t *testing.T, s blob.Store) []string { return tempFiles(t, s.(*fsblob.Store).Root()) },
	})
}

// TestLayout pins the on-disk layout, which operators and backups see.
func TestLayout(t *testing.T) {
	root := t.TempDir()
	s, err := fsblob.New(root)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Put(context.Background(), strings.NewReader("layout"))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(blobPath(root, info.Digest))
	if err != nil {
		t.Fatalf("blob not at the documented path: %v", err)
	}
	if fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("blob file mode %v is writable", fi.Mode())
	}
}

// TestForeignFilesIgnored: files that are not blobs in their place (an
// editor backup, a blob copied into the wrong folder) do not show in List.
func TestForeignFilesIgnored(t *testing.T) {
	root := t.TempDir()
	s, err := fsblob.New(root)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Put(context.Background(), strings.NewReader("real"))
	if err != nil {
		t.Fatal(err)
	}
	path := blobPath(root, info.Digest)
	hexSum := filepath.Base(path)
	misplaced := filepath.Join(root, "sha256", "00", "00", hexSum)
	for _, p := range []string{path + "~", filepath.Join(filepath.Dir(path), "README"), misplaced} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for i, err := range s.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, i.Digest)
	}
	if len(got) != 1 || got[0] != info.Digest {
		t.Fatalf("List = %v, want only %s", got, info.Digest)
	}
}

// TestStaleTempRemoved: New removes temp files older than StaleTempAge and
// keeps younger ones, which may belong to a Put running in another process.
func TestStaleTempRemoved(t *testing.T) {
	root := t.TempDir()
	if _, err := fsblob.New(root); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(root, "tmp", "put-stale")
	fresh := filepath.Join(root, "tmp", "put-fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-fsblob.StaleTempAge - time.Minute)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := fsblob.New(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temp file still there (err %v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("fresh temp file removed: %v", err)
	}
}

func blobPath(root, digest string) string {
	h := strings.TrimPrefix(digest, blob.DigestPrefix)
	return filepath.Join(root, "sha256", h[0:2], h[2:4], h)
}

func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestRePutHealsTruncatedBlob: a blob file cut short on disk is replaced
// by the next Put of its content instead of being kept as "already there".
func TestRePutHealsTruncatedBlob(t *testing.T) {
	root := t.TempDir()
	s, err := fsblob.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	content := strings.Repeat("skill ", 1000)
	info, err := s.Put(ctx, strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	path := blobPath(root, info.Digest)
	os.Chmod(path, 0o600)
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, strings.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != content {
		t.Fatalf("after re-Put the file holds %d bytes (%v), want the %d-byte content", len(got), err, len(content))
	}
}

// TestMarkedConformance: blob.Marked, which the server puts around its
// blob store, is still a conforming store, and its errors (a reader's
// included) say they came from the blob store while io.EOF stays io.EOF.
func TestMarkedConformance(t *testing.T) {
	roots := map[blob.Store]string{}
	openMarked := func(t *testing.T) blob.Store {
		root := t.TempDir()
		s, err := fsblob.New(root)
		if err != nil {
			t.Fatal(err)
		}
		m := blob.Marked(s)
		roots[m] = root
		t.Cleanup(func() { m.Close() })
		return m
	}
	corrupt := func(t *testing.T, s blob.Store, digest string) { corruptAt(t, roots[s], digest) }
	blobtest.Run(t, openMarked, blobtest.Options{Corrupt: corrupt,
		TempFiles: func(t *testing.T, s blob.Store) []string { return tempFiles(t, roots[s]) }})

	s := openMarked(t)
	ctx := context.Background()
	if _, ok := s.(blob.TempCleaner); !ok {
		t.Error("the marked store lost the driver's TempCleaner")
	}
	if _, err := s.Stat(ctx, "sha256:"+strings.Repeat("0", 64)); skilld.ErrorBackend(err) != skilld.BackendBlob || !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat of a missing blob: %v (backend %q)", err, skilld.ErrorBackend(err))
	}
	info, err := s.Put(ctx, strings.NewReader(strings.Repeat("x", 4096)))
	if err != nil {
		t.Fatal(err)
	}
	corrupt(t, s, info.Digest)
	rc, err := s.Open(ctx, info.Digest)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	_, err = io.ReadAll(rc)
	if skilld.ErrorBackend(err) != skilld.BackendBlob || skilld.ErrorCode(err) != skilld.EINTEGRITY {
		t.Errorf("reading a damaged blob: %v (backend %q, code %q)", err, skilld.ErrorBackend(err), skilld.ErrorCode(err))
	}
}

// corruptAt flips one byte of the blob stored under root.
func corruptAt(t *testing.T, root, digest string) {
	t.Helper()
	path := blobPath(root, digest)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	// The blob is read-only; so is anyone who corrupts it by accident.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
