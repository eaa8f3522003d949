package secretkey_test

import (
	"bytes"
	"testing"

	"github.com/skilld/skilld/secretkey"
)

// FuzzParseKey: ParseKey never panics; a key it accepts seals a value
// that opens to the same bytes, and its id is stable.
func FuzzParseKey(f *testing.F) {
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	f.Add("not a key")
	f.Fuzz(func(t *testing.T, text string) {
		k, err := secretkey.ParseKey(text)
		if err != nil {
			return
		}
		again, err := secretkey.ParseKey(text)
		if err != nil || again.ID != k.ID || len(k.ID) != 16 {
			t.Fatalf("id %q then %q, %v", k.ID, again.ID, err)
		}
		ring := &secretkey.Keyring{Current: k}
		id, sealed, err := ring.Seal("w", "N", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ring.Open(id, sealed, "w", "N"); err != nil || !bytes.Equal(got, []byte(text)) {
			t.Fatalf("opened %q, %v", got, err)
		}
	})
}
