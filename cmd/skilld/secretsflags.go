package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/skilld/skilld/secretkey"
)

// secretsFlags are serve's secrets keys: the current one seals, old ones
// only open (during a key rotation).
type secretsFlags struct {
	keyFile, oldKeyFile string
}

func (f *secretsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.keyFile, "secrets-key-file", "", "file holding the key that encrypts workspace secrets: 32 random bytes in base64\n"+
		"(head -c 32 /dev/urandom | base64); or env SKILLD_SECRETS_KEY with the key itself; none: no secrets are kept")
	fs.StringVar(&f.oldKeyFile, "secrets-old-key-file", "", "file holding a previous secrets key, used only to read values sealed under it\n"+
		"while skilld secrets reseal encrypts them again under the current key")
}

// keyring reads the keys; nil when none is configured.
func (f *secretsFlags) keyring() (*secretkey.Keyring, error) {
	text := os.Getenv("SKILLD_SECRETS_KEY")
	if f.keyFile != "" {
		data, err := os.ReadFile(f.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--secrets-key-file: %w", err)
		}
		text = string(data)
	}
	if text == "" {
		if f.oldKeyFile != "" {
			return nil, fmt.Errorf("--secrets-old-key-file needs a current key (--secrets-key-file or SKILLD_SECRETS_KEY)")
		}
		return nil, nil
	}
	cur, err := secretkey.ParseKey(text)
	if err != nil {
		return nil, err
	}
	ring := &secretkey.Keyring{Current: cur}
	if f.oldKeyFile != "" {
		data, err := os.ReadFile(f.oldKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--secrets-old-key-file: %w", err)
		}
		old, err := secretkey.ParseKey(string(data))
		if err != nil {
			return nil, fmt.Errorf("--secrets-old-key-file: %w", err)
		}
		ring.Old = append(ring.Old, old)
	}
	return ring, nil
}
