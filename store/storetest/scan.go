package storetest

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// testPackageScans: a package's scan is stored with its rules version and
// read back as written (an empty scan as an empty list); a scan under a
// newer version replaces it; the stale list names exactly the packages
// without a scan at a version, in pages; a scan of a missing package is
// ENOTFOUND; a scan written in a transaction that fails is not kept;
// deleting the package deletes its scan.
func testPackageScans(t *testing.T, open Opener) {
	s := open(t)
	a, b, c := newPackage(t, s, "scan a"), newPackage(t, s, "scan b"), newPackage(t, s, "scan c")

	_, err := s.PackageScanGet(ctx(t), &store.PackageScanGetParams{Digest: a})
	wantCode(t, err, skilld.ENOTFOUND)
	wantCode(t, s.PackageScanPut(ctx(t), &store.PackageScanPutParams{Digest: "sha256:missing", RulesVersion: 1}), skilld.ENOTFOUND)

	findings := []skilld.Finding{
		{Rule: "pipe-to-shell", Severity: skilld.SeverityHigh, File: "scripts/i.sh", Line: 3, Message: "m", Excerpt: "curl x | sh <U+200B> ünï"},
		{Rule: "archive", Severity: skilld.SeverityMedium, File: "a.zip", Message: "zip"},
	}
	if err := s.PackageScanPut(ctx(t), &store.PackageScanPutParams{Digest: a, RulesVersion: 1, Findings: findings}); err != nil {
		t.Fatal(err)
	}
	if err := s.PackageScanPut(ctx(t), &store.PackageScanPutParams{Digest: b, RulesVersion: 1}); err != nil {
		t.Fatal(err)
	}
	got := must[*skilld.PackageScan](t)(s.PackageScanGet(ctx(t), &store.PackageScanGetParams{Digest: a}))
	if got.Digest != a || got.RulesVersion != 1 || !reflect.DeepEqual(got.Findings, findings) || got.ScannedAt.IsZero() {
		t.Errorf("scan read back %+v", got)
	}
	empty := must[*skilld.PackageScan](t)(s.PackageScanGet(ctx(t), &store.PackageScanGetParams{Digest: b}))
	if empty.Findings == nil || len(empty.Findings) != 0 {
		t.Errorf("empty scan read back as %#v", empty.Findings)
	}

	stale := func(version int, after string, limit int) []string {
		t.Helper()
		var out []string
		for _, d := range must[[]string](t)(s.PackageScanStale(ctx(t), &store.PackageScanStaleParams{RulesVersion: version, After: after, Limit: limit})) {
			if d == a || d == b || d == c {
				out = append(out, d)
			}
		}
		return out
	}
	if got := stale(1, "", 0); !slices.Equal(got, []string{c}) {
		t.Errorf("stale at version 1: %v, want only %s", got, c)
	}
	want := []string{a, b, c}
	slices.Sort(want)
	if got := stale(2, "", 0); !slices.Equal(got, want) {
		t.Errorf("stale at version 2: %v, want %v", got, want)
	}
	if got := stale(2, want[0], 0); !slices.Equal(got, want[1:]) {
		t.Errorf("stale at version 2 after %s: %v", want[0], got)
	}
	page := must[[]string](t)(s.PackageScanStale(ctx(t), &store.PackageScanStaleParams{RulesVersion: 2, Limit: 1}))
	if len(page) != 1 {
		t.Errorf("a page of 1 has %d digests", len(page))
	}

	// A rescan under version 2 replaces the row.
	if err := s.PackageScanPut(ctx(t), &store.PackageScanPutParams{Digest: a, RulesVersion: 2, Findings: findings[:1]}); err != nil {
		t.Fatal(err)
	}
	got = must[*skilld.PackageScan](t)(s.PackageScanGet(ctx(t), &store.PackageScanGetParams{Digest: a}))
	if got.RulesVersion != 2 || len(got.Findings) != 1 {
		t.Errorf("rescan read back %+v", got)
	}
	if got := stale(2, "", 0); slices.Contains(got, a) {
		t.Errorf("%s rescanned at 2 is still stale: %v", a, got)
	}

	// Written in a transaction that fails: nothing kept.
	boom := errors.New("boom")
	err = s.Tx(ctx(t), func(q store.Querier) error {
		if err := q.PackageScanPut(ctx(t), &store.PackageScanPutParams{Digest: c, RulesVersion: 2, Findings: findings}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("tx error %v", err)
	}
	_, err = s.PackageScanGet(ctx(t), &store.PackageScanGetParams{Digest: c})
	wantCode(t, err, skilld.ENOTFOUND)

	// The scan goes with its package.
	if err := s.PackageDelete(ctx(t), &store.PackageDeleteParams{Digest: a}); err != nil {
		t.Fatal(err)
	}
	_, err = s.PackageScanGet(ctx(t), &store.PackageScanGetParams{Digest: a})
	wantCode(t, err, skilld.ENOTFOUND)
}
