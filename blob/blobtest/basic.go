package blobtest

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

func testRoundTrip(t *testing.T, s blob.Store) {
	cases := []struct {
		name    string
		content []byte
	}{
		{"empty", []byte{}},
		{"small", []byte("---\nname: hello\n---\nSay hello.\n")},
		{"1MiB-random", randomBytes(1, 1<<20)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info := put(t, s, c.content)
			got, err := readAll(t, s, info.Digest)
			if err != nil {
				t.Fatalf("reading %s: %v", info.Digest, err)
			}
			if !bytes.Equal(got, c.content) {
				t.Fatalf("read back %d bytes that differ from the %d stored", len(got), len(c.content))
			}
			st, err := s.Stat(context.Background(), info.Digest)
			if err != nil {
				t.Fatalf("Stat(%s): %v", info.Digest, err)
			}
			if st.Digest != info.Digest || st.Size != info.Size || st.ModTime.IsZero() {
				t.Fatalf("Stat = %+v, want digest %s and size %d", st, info.Digest, info.Size)
			}
		})
	}
}

func testIdempotentPut(t *testing.T, s blob.Store) {
	content := randomBytes(2, 4096)
	first := put(t, s, content)
	before, err := s.Stat(context.Background(), first.Digest)
	if err != nil {
		t.Fatal(err)
	}
	second := put(t, s, content)
	if second.Digest != first.Digest || second.Size != first.Size {
		t.Fatalf("re-Put = %+v, first Put = %+v", second, first)
	}
	after, err := s.Stat(context.Background(), first.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime.Equal(before.ModTime) {
		t.Fatalf("re-Put changed the stored blob: ModTime %v -> %v", before.ModTime, after.ModTime)
	}
	if got := listAll(t, s, ""); len(got) != 1 {
		t.Fatalf("after two Puts of the same content List has %d blobs, want 1", len(got))
	}
}

func testNotFound(t *testing.T, s blob.Store) {
	ctx := context.Background()
	info := put(t, s, []byte("short-lived"))
	if err := s.Delete(ctx, info.Digest); err != nil {
		t.Fatalf("Delete(%s): %v", info.Digest, err)
	}
	never := digestOf([]byte("never stored"))
	for _, d := range []string{info.Digest, never} {
		_, err := s.Stat(ctx, d)
		wantError(t, "Stat of a missing blob", err, skilld.ENOTFOUND, blob.ErrNotFound, d)
		rc, err := s.Open(ctx, d)
		if err == nil {
			rc.Close()
		}
		wantError(t, "Open of a missing blob", err, skilld.ENOTFOUND, blob.ErrNotFound, d)
		if err := s.Delete(ctx, d); err != nil {
			t.Fatalf("Delete of a missing blob %s: %v, want nil", d, err)
		}
	}
	if got := listAll(t, s, ""); len(got) != 0 {
		t.Fatalf("List after Delete = %v, want empty", got)
	}
}

// badDigests are refused by every method; several would escape a naive
// file or key layout.
var badDigests = []string{
	"",
	"sha256:",
	"sha256:../../x",
	"sha256:" + pad64(strings.Repeat("../", 21)),         // traversal, right length
	"sha256:" + pad64("ab/../../../../../../etc/passwd"), // traversal, right length
	"sha256:" + pad64("/etc/passwd"),                     // absolute path
	"sha256:" + strings.Repeat("A", 64),                  // uppercase
	"sha256:" + strings.Repeat("a", 63),                  // short
	"sha256:" + strings.Repeat("a", 65),                  // long
	"sha256:" + strings.Repeat("a", 63) + "g",            // not hex
	"sha256:" + strings.Repeat("a", 63) + "\x00",         // NUL
	"sha256:" + strings.Repeat("a", 64) + "\n",           // trailing newline
	"SHA256:" + strings.Repeat("a", 64),                  // algorithm case
	"md5:" + strings.Repeat("a", 32),                     // other algorithm
	"sha512:" + strings.Repeat("a", 128),                 // other algorithm
	strings.Repeat("a", 64),                              // no algorithm
	" sha256:" + strings.Repeat("a", 64),                 // leading space
}

// pad64 pads s with zeros to the 64 characters of a digest's hex part.
func pad64(s string) string { return s + strings.Repeat("0", 64-len(s)) }

func testInvalidDigest(t *testing.T, s blob.Store) {
	ctx := context.Background()
	for _, d := range badDigests {
		_, err := s.Stat(ctx, d)
		wantError(t, "Stat("+d+")", err, skilld.EINVALID, blob.ErrInvalidDigest, "")
		rc, err := s.Open(ctx, d)
		if err == nil {
			rc.Close()
		}
		wantError(t, "Open("+d+")", err, skilld.EINVALID, blob.ErrInvalidDigest, "")
		err = s.Delete(ctx, d)
		wantError(t, "Delete("+d+")", err, skilld.EINVALID, blob.ErrInvalidDigest, "")
	}
}

func testIntegrity(t *testing.T, s blob.Store, corrupt func(*testing.T, blob.Store, string)) {
	info := put(t, s, randomBytes(3, 64<<10))
	corrupt(t, s, info.Digest)
	got, err := readAll(t, s, info.Digest)
	wantError(t, "reading a corrupted blob", err, skilld.EINTEGRITY, blob.ErrIntegrity, info.Digest)
	if int64(len(got)) > info.Size {
		t.Fatalf("read %d bytes of a %d-byte blob", len(got), info.Size)
	}
}

// testPutHeals: putting content again whose stored copy was damaged
// replaces the copy.
func testPutHeals(t *testing.T, s blob.Store, corrupt func(*testing.T, blob.Store, string)) {
	content := randomBytes(4, 3000)
	info := put(t, s, content)
	corrupt(t, s, info.Digest)
	if _, err := readAll(t, s, info.Digest); !errors.Is(err, blob.ErrIntegrity) {
		t.Fatalf("the corrupted blob reads without an integrity error: %v", err)
	}
	put(t, s, content)
	got, err := readAll(t, s, info.Digest)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("after putting it again: %v (%d bytes)", err, len(got))
	}
}

// testCheck: Check reads every blob and reports exactly the damaged ones.
func testCheck(t *testing.T, s blob.Store, corrupt func(*testing.T, blob.Store, string)) {
	var infos []blob.Info
	for i := range 4 {
		infos = append(infos, put(t, s, randomBytes(uint64(10+i), 1000+i)))
	}
	corrupt(t, s, infos[2].Digest)
	seen, damaged := 0, []string{}
	for c, err := range blob.Check(t.Context(), s, "") {
		if err != nil {
			t.Fatal(err)
		}
		seen++
		if c.Damaged != nil {
			if !errors.Is(c.Damaged, blob.ErrIntegrity) {
				t.Errorf("damage %v does not wrap ErrIntegrity", c.Damaged)
			}
			damaged = append(damaged, c.Digest)
		}
	}
	if seen != 4 || len(damaged) != 1 || damaged[0] != infos[2].Digest {
		t.Errorf("Check saw %d blobs, damaged %v; want 4 and %s", seen, damaged, infos[2].Digest)
	}
}

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	var key [32]byte
	key[0] = byte(seed)
	rand.NewChaCha8(key).Read(b)
	return b
}
