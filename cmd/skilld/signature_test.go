package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld/signature/signaturetest"
	"github.com/skilld/skilld/store/storetest"
)

// TestCatalogSignature: what `skilld pack --manifest` prints is what a
// publisher signs; `catalog create-registry --public-key` and `catalog
// publish --bundle` carry the key and the bundle, and publish reports the
// signature verified.
func TestCatalogSignature(t *testing.T) {
	s := newAPIServer(t, storetest.Drivers(t)[0].Open)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "lint")
	writeFiles(t, dir, map[string]string{"SKILL.md": skillText("lint", "Lint code.")})
	code, manifest, errOut := runCLI(t, "pack", "--manifest", dir)
	if code != exitOK || strings.HasPrefix(manifest, "sha256:") {
		t.Fatalf("pack --manifest: exit %d %q %s", code, manifest, errOut)
	}
	key := signaturetest.NewKey(t)
	keyFile, bundleFile := filepath.Join(tmp, "key.pem"), filepath.Join(tmp, "bundle.json")
	if err := os.WriteFile(keyFile, []byte(key.PublicKeyPEM(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bundleFile, key.Sign(t, []byte(manifest)), 0o600); err != nil {
		t.Fatal(err)
	}
	s.ok(t, s.admin, "default", "catalog", "create-registry", "team", "--trust", "verified", "--public-key", keyFile)
	if out := s.ok(t, s.admin, "default", "catalog", "publish", "team", dir, "--bundle", bundleFile); !strings.Contains(out, "signature: verified, signed by sha256:") {
		t.Errorf("publish --bundle:\n%s", out)
	}
	if code, _, errOut := s.cli(t, s.admin, "default", "catalog", "publish", "team", dir, "--bundle", filepath.Join(tmp, "missing.json")); code == exitOK || !strings.Contains(errOut, "missing.json") {
		t.Errorf("missing bundle file: exit %d %s", code, errOut)
	}
}
