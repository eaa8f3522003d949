package blob_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

const validHex = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

func TestParseDigest(t *testing.T) {
	h, err := blob.ParseDigest("sha256:" + validHex)
	if err != nil || h != validHex {
		t.Fatalf("ParseDigest(valid) = %q, %v", h, err)
	}
	for _, d := range []string{
		"", "sha256:", "sha256:" + strings.ToUpper(validHex), "sha256:" + validHex[1:],
		"sha256:" + validHex + "0", "sha256:../" + validHex[3:], "sha512:" + validHex, validHex,
	} {
		_, err := blob.ParseDigest(d)
		if skilld.ErrorCode(err) != skilld.EINVALID || !errors.Is(err, blob.ErrInvalidDigest) {
			t.Errorf("ParseDigest(%q) = %v, want EINVALID wrapping ErrInvalidDigest", d, err)
		}
	}
	_, err = blob.ParseDigest("sha256:" + validHex[:63] + "Z")
	if want := `character 'Z' at offset 70`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v does not point at the bad character (%s)", err, want)
	}
}

func TestParsePrefix(t *testing.T) {
	ok := map[string]string{
		"": "", "s": "", "sha": "", "sha256": "", "sha256:": "",
		"sha256:2": "2", "sha256:2cf": "2cf", "sha256:" + validHex: validHex,
	}
	for p, want := range ok {
		if got, err := blob.ParsePrefix(p); err != nil || got != want {
			t.Errorf("ParsePrefix(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	for _, p := range []string{"x", "sha1", "sha256:X", "sha256:/", "sha256:" + validHex + "0", "md5:ab"} {
		if _, err := blob.ParsePrefix(p); skilld.ErrorCode(err) != skilld.EINVALID || !errors.Is(err, blob.ErrInvalidDigest) {
			t.Errorf("ParsePrefix(%q) = %v, want EINVALID", p, err)
		}
	}
}

// FuzzParseDigest: whatever the input, ParseDigest does not panic, and what
// it accepts is exactly 64 lowercase hex digits that format back to the
// input; the drivers build paths and keys from nothing else.
func FuzzParseDigest(f *testing.F) {
	for _, s := range []string{"sha256:" + validHex, "sha256:../../x", "", "sha256:" + strings.Repeat("/", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, d string) {
		h, err := blob.ParseDigest(d)
		if err != nil {
			if h != "" || !errors.Is(err, blob.ErrInvalidDigest) {
				t.Fatalf("ParseDigest(%q) = %q, %v", d, h, err)
			}
			return
		}
		if len(h) != blob.HexLen || !blob.IsHex(h) || blob.FormatDigest(h) != d {
			t.Fatalf("ParseDigest(%q) accepted %q", d, h)
		}
	})
}
