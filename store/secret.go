package store

import (
	"context"

	"github.com/skilld/skilld"
)

// SecretQueries persist a workspace's secrets, sealed by the caller: the
// store never sees a value in the clear.
type SecretQueries interface {
	// SecretPut stores or replaces the sealed value of a secret.
	SecretPut(ctx context.Context, p *SecretPutParams) (*skilld.Secret, error)
	// SecretList returns the workspace's secrets by name, without values.
	SecretList(ctx context.Context, p *SecretListParams) ([]skilld.Secret, error)
	// SecretGet returns a sealed value. ENOTFOUND when there is none.
	SecretGet(ctx context.Context, p *SecretGetParams) (*SealedSecret, error)
	// SecretDelete deletes a secret. ENOTFOUND when there is none.
	SecretDelete(ctx context.Context, p *SecretGetParams) error
}

// SealedSecret is a stored secret value: Ciphertext sealed under the
// operator key KeyID.
type SealedSecret struct {
	skilld.Secret
	KeyID      string
	Ciphertext []byte
}

type SecretPutParams struct {
	WorkspaceID string
	Name        string
	KeyID       string
	Ciphertext  []byte
	UpdatedBy   string
}

type SecretListParams struct{ WorkspaceID string }

type SecretGetParams struct {
	WorkspaceID string
	Name        string
}
