// Package secretkey seals workspace secrets with AES-256-GCM under keys the
// operator provides, so the store only ever holds ciphertext. Each sealed
// value names the key that sealed it (a key id derived from the key), so
// a keyring holding the new key and the old one reads both while the
// values are sealed again under the new one.
package secretkey

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
)

// Key is one 32-byte AES-256 key and its id.
type Key struct {
	ID   string
	aead cipher.AEAD
}

// ParseKey reads a key written as base64 (standard or URL alphabet,
// padded or not) of exactly 32 bytes. Its id is the first 8 bytes of the
// SHA-256 of the key, in hex: stable, and no help in guessing the key.
func ParseKey(text string) (*Key, error) {
	text = strings.TrimSpace(text)
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err = enc.DecodeString(text); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the secrets key is not base64: %w", err)
	}
	if len(raw) != 32 {
		return nil, fmt.Errorf("the secrets key is %d bytes; it must be 32 (make one with: head -c 32 /dev/urandom | base64)", len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	return &Key{ID: hex.EncodeToString(sum[:8]), aead: aead}, nil
}

// Generate makes a new random key and returns it with its base64 text,
// the form ParseKey and --secrets-key-file read.
func Generate() (*Key, string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	text := base64.StdEncoding.EncodeToString(raw)
	k, err := ParseKey(text)
	return k, text, err
}

// Keyring seals under Current and opens under Current or any of Old.
type Keyring struct {
	Current *Key
	Old     []*Key
}

// additional binds a sealed value to its workspace and name: a ciphertext
// copied to another row does not open.
func additional(workspaceID, name string) []byte {
	return []byte(workspaceID + "\x00" + name)
}

// Seal encrypts value for the secret name of a workspace: a random nonce
// followed by the sealed value.
func (k *Keyring) Seal(workspaceID, name string, value []byte) (keyID string, ciphertext []byte, err error) {
	if k == nil || k.Current == nil {
		return "", nil, noKey()
	}
	nonce := make([]byte, k.Current.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, err
	}
	return k.Current.ID, k.Current.aead.Seal(nonce, nonce, value, additional(workspaceID, name)), nil
}

// Open decrypts a value sealed under the key keyID.
func (k *Keyring) Open(keyID string, ciphertext []byte, workspaceID, name string) ([]byte, error) {
	if k == nil || k.Current == nil {
		return nil, noKey()
	}
	for _, key := range append([]*Key{k.Current}, k.Old...) {
		if key.ID != keyID {
			continue
		}
		n := key.aead.NonceSize()
		if len(ciphertext) < n {
			return nil, skilld.Errorf(skilld.EINTEGRITY, "secret %s is damaged: its stored value is too short", name)
		}
		value, err := key.aead.Open(nil, ciphertext[:n], ciphertext[n:], additional(workspaceID, name))
		if err != nil {
			return nil, skilld.Errorf(skilld.EINTEGRITY, "secret %s does not open under key %s: its stored value is damaged", name, keyID)
		}
		return value, nil
	}
	return nil, skilld.Errorf(skilld.EUNAVAILABLE, "secret %s is sealed under key %s, which this server does not have (give it with --secrets-old-key-file)", name, keyID)
}

// noKey: the server was started without a secrets key.
func noKey() error {
	return skilld.Errorf(skilld.EUNAVAILABLE, "this server keeps no secrets: start it with --secrets-key-file FILE or SKILLD_SECRETS_KEY set to 32 random bytes in base64 (head -c 32 /dev/urandom | base64)")
}
