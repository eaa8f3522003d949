package blobtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

func testList(t *testing.T, s blob.Store) {
	if got := listAll(t, s, ""); len(got) != 0 {
		t.Fatalf("List on an empty store = %v", got)
	}
	// 48 blobs spread their digests over most of the first hex digit.
	sizes := map[string]int64{}
	var all []string
	for i := range 48 {
		info := put(t, s, []byte(fmt.Sprintf("blob number %d", i)))
		sizes[info.Digest] = info.Size
		all = append(all, info.Digest)
	}
	slices.Sort(all)

	first := all[0]
	hexOf := func(d string) string { return strings.TrimPrefix(d, blob.DigestPrefix) }
	prefixes := []string{
		"", "s", "sha256", "sha256:",
		"sha256:" + hexOf(first)[:1],
		"sha256:" + hexOf(first)[:2],
		"sha256:" + hexOf(first)[:3],
		"sha256:" + hexOf(first)[:5],
		first, // a whole digest is a prefix of itself
		"sha256:" + hexOf(all[len(all)-1])[:1],
		"sha256:" + nonePrefix(all),
	}
	for _, p := range prefixes {
		var want []string
		for _, d := range all {
			if strings.HasPrefix(d, p) {
				want = append(want, d)
			}
		}
		var got []string
		for _, info := range listAll(t, s, p) {
			if info.Size != sizes[info.Digest] {
				t.Fatalf("List(%q) reports %s with size %d, want %d", p, info.Digest, info.Size, sizes[info.Digest])
			}
			if info.ModTime.IsZero() {
				t.Fatalf("List(%q) reports %s with zero ModTime", p, info.Digest)
			}
			got = append(got, info.Digest)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("List(%q) =\n%v\nwant (in digest order)\n%v", p, got, want)
		}
	}

	// Breaking out of the loop early must stop the listing cleanly.
	n := 0
	for _, err := range s.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}

	for _, bad := range []string{"md5:", "sha256:AB", "sha256:../", "sha256:" + strings.Repeat("a", 65), "x"} {
		var errs []error
		for _, err := range s.List(context.Background(), bad) {
			errs = append(errs, err)
		}
		if len(errs) != 1 {
			t.Fatalf("List(%q) yielded %d items, want one error", bad, len(errs))
		}
		wantError(t, fmt.Sprintf("List(%q)", bad), errs[0], skilld.EINVALID, blob.ErrInvalidDigest, "")
	}
}

// nonePrefix returns two hex digits that no digest in ds starts with.
func nonePrefix(ds []string) string {
	for i := range 256 {
		p := fmt.Sprintf("%02x", i)
		if !slices.ContainsFunc(ds, func(d string) bool { return strings.HasPrefix(d, blob.DigestPrefix+p) }) {
			return p
		}
	}
	panic("every two-digit prefix taken")
}
