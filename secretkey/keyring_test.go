package secretkey_test

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/secretkey"
)

func newKey(t *testing.T) (*secretkey.Key, string) {
	t.Helper()
	k, text, err := secretkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k, text
}

func TestSealOpen(t *testing.T) {
	k, _ := newKey(t)
	ring := &secretkey.Keyring{Current: k}
	value := []byte("hunter2-very-secret-value")
	id, sealed, err := ring.Seal("ws1", "TOKEN", value)
	if err != nil || id != k.ID {
		t.Fatal(id, err)
	}
	if bytes.Contains(sealed, value) {
		t.Fatal("the sealed bytes hold the value")
	}
	_, again, _ := ring.Seal("ws1", "TOKEN", value)
	if bytes.Equal(sealed, again) {
		t.Error("two seals of one value are equal: the nonce is not fresh")
	}
	got, err := ring.Open(id, sealed, "ws1", "TOKEN")
	if err != nil || !bytes.Equal(got, value) {
		t.Fatalf("opened %q, %v", got, err)
	}
	// Bound to its workspace and name; damage is detected.
	for _, c := range []struct{ ws, name string }{{"ws2", "TOKEN"}, {"ws1", "OTHER"}} {
		if _, err := ring.Open(id, sealed, c.ws, c.name); skilld.ErrorCode(err) != skilld.EINTEGRITY {
			t.Errorf("opened as %s/%s: %v", c.ws, c.name, err)
		}
	}
	damaged := bytes.Clone(sealed)
	damaged[len(damaged)-1] ^= 1
	if _, err := ring.Open(id, damaged, "ws1", "TOKEN"); skilld.ErrorCode(err) != skilld.EINTEGRITY {
		t.Errorf("damaged value: %v", err)
	}
	if _, err := ring.Open(id, sealed[:5], "ws1", "TOKEN"); skilld.ErrorCode(err) != skilld.EINTEGRITY {
		t.Errorf("short value: %v", err)
	}
}

// Rotation: a ring with a new current key and the old one opens values
// sealed under either and seals under the new one; without the old key a
// value sealed under it is EUNAVAILABLE naming the key.
func TestRotation(t *testing.T) {
	old, _ := newKey(t)
	cur, _ := newKey(t)
	id, sealed, err := (&secretkey.Keyring{Current: old}).Seal("ws", "A", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	ring := &secretkey.Keyring{Current: cur, Old: []*secretkey.Key{old}}
	if got, err := ring.Open(id, sealed, "ws", "A"); err != nil || string(got) != "v" {
		t.Fatalf("old value through the rotated ring: %q, %v", got, err)
	}
	if newID, _, _ := ring.Seal("ws", "A", []byte("v")); newID != cur.ID || newID == old.ID {
		t.Errorf("sealed under %s, want the current key %s", newID, cur.ID)
	}
	if _, err := (&secretkey.Keyring{Current: cur}).Open(id, sealed, "ws", "A"); skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
		t.Errorf("without the old key: %v", err)
	}
}

func TestParseKey(t *testing.T) {
	k1, text := newKey(t)
	k2, err := secretkey.ParseKey(text + "\n")
	if err != nil || k2.ID != k1.ID || len(k1.ID) != 16 {
		t.Errorf("ids %q and %q, %v", k1.ID, k2.ID, err)
	}
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(make([]byte, 16))} {
		if _, err := secretkey.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
	var none *secretkey.Keyring
	if _, _, err := none.Seal("w", "n", []byte("v")); skilld.ErrorCode(err) != skilld.EUNAVAILABLE {
		t.Errorf("sealing without a key: %v", err)
	}
}
