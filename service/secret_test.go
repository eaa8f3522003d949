package service_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/secretkey"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

func TestSecrets(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) { testSecrets(t, open) })
}

func randomKey(t *testing.T) *secretkey.Key {
	t.Helper()
	k, _, err := secretkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testSecrets: admins put and delete, viewers list names only; the stored
// bytes do not hold the value and open to it; a server without a key
// refuses saying how to configure one; after rotation the old values
// read through the old key and are resealed under the new one.
func testSecrets(t *testing.T, open storetest.Opener) {
	oldKey := randomKey(t)
	ring := &secretkey.Keyring{Current: oldKey}
	e := newEnv(t, open, service.Config{Secrets: ring}, nil)
	ctx := t.Context()
	const value = "s3cr3t-value-that-must-not-be-stored"
	put := func(a service.Actor, name, v string) error {
		return e.svc.PutSecret(ctx, a, service.PutSecretParams{SecretRef: service.SecretRef{Name: name}, Value: v})
	}
	wantCode(t, put(e.member, "API_TOKEN", value), skilld.EFORBIDDEN)
	wantCode(t, put(e.admin, "api-token", value), skilld.EINVALID)
	wantCode(t, put(e.admin, "API_TOKEN", ""), skilld.EINVALID)
	// Too short to be told apart from ordinary output (and redacted), a
	// NUL no environment variable can hold, a name that steers the locale.
	wantCode(t, put(e.admin, "API_TOKEN", "abc"), skilld.EINVALID)
	wantCode(t, put(e.admin, "API_TOKEN", "ab\x00cd"), skilld.EINVALID)
	wantCode(t, put(e.admin, "LC_ALL", value), skilld.EINVALID)
	wantCode(t, put(e.admin, "API_TOKEN", strings.Repeat("x", service.MaxSecretSize+1)), skilld.EINVALID)
	if err := put(e.admin, "API_TOKEN", value); err != nil {
		t.Fatal(err)
	}
	if err := put(e.admin, "OTHER", "second"); err != nil {
		t.Fatal(err)
	}

	sealed := must[*store.SealedSecret](t)(e.db.SecretGet(ctx, &store.SecretGetParams{WorkspaceID: e.admin.WorkspaceID, Name: "API_TOKEN"}))
	if bytes.Contains(sealed.Ciphertext, []byte(value)) || sealed.KeyID != oldKey.ID {
		t.Fatalf("stored %q under %s", sealed.Ciphertext, sealed.KeyID)
	}
	if got := must[[]byte](t)(e.svc.SecretValue(ctx, e.admin.WorkspaceID, "API_TOKEN")); string(got) != value {
		t.Errorf("value opens as %q", got)
	}
	list := must[*service.SecretList](t)(e.svc.ListSecrets(ctx, e.viewer, service.ListSecretsParams{})).Items
	if len(list) != 2 || list[0].Name != "API_TOKEN" || list[0].UpdatedAt.IsZero() {
		t.Errorf("list %+v", list)
	}
	if l := must[*service.SecretList](t)(e.svc.ListSecrets(ctx, e.other, service.ListSecretsParams{})).Items; len(l) != 0 {
		t.Errorf("another workspace lists %+v", l)
	}

	// Rotation: a new current key, the old one kept for reading.
	newKey := randomKey(t)
	ring.Current, ring.Old = newKey, []*secretkey.Key{oldKey}
	if err := put(e.admin, "OTHER", "third"); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.ResealSecrets(ctx, e.member, service.ResealSecretsParams{})
	wantCode(t, err, skilld.EFORBIDDEN)
	if n := must[*service.ResealResult](t)(e.svc.ResealSecrets(ctx, e.admin, service.ResealSecretsParams{})).Resealed; n != 1 {
		t.Errorf("resealed %d secrets, want 1 (OTHER was put under the new key)", n)
	}
	ring.Old = nil
	if got := must[[]byte](t)(e.svc.SecretValue(ctx, e.admin.WorkspaceID, "API_TOKEN")); string(got) != value {
		t.Errorf("after reseal the value opens as %q", got)
	}

	wantCode(t, e.svc.DeleteSecret(ctx, e.member, service.SecretRef{Name: "API_TOKEN"}), skilld.EFORBIDDEN)
	if err := e.svc.DeleteSecret(ctx, e.admin, service.SecretRef{Name: "API_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.svc.DeleteSecret(ctx, e.admin, service.SecretRef{Name: "API_TOKEN"}), skilld.ENOTFOUND)

	keyless := newEnv(t, open, service.Config{}, nil)
	err = keyless.svc.PutSecret(ctx, keyless.admin, service.PutSecretParams{SecretRef: service.SecretRef{Name: "A"}, Value: "value"})
	wantCode(t, err, skilld.EUNAVAILABLE)
	if msg := skilld.ErrorMessage(err); !strings.Contains(msg, "--secrets-key-file") || !strings.Contains(msg, "SKILLD_SECRETS_KEY") {
		t.Errorf("keyless refusal says %q", msg)
	}
}
