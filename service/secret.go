package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/permissions"
	"github.com/skilld/skilld/store"
)

// MaxSecretSize bounds a secret's value; MinSecretSize is the shortest
// value that can be told apart from ordinary output, and so redacted.
const (
	MaxSecretSize = 64 << 10
	MinSecretSize = 4
)

type SecretRef struct {
	Name string `json:"name" path:"name" jsonschema:"the secret's name, an environment variable name (A-Z, 0-9, _)"`
}

type PutSecretParams struct {
	SecretRef
	Value string `json:"value" jsonschema:"the secret's value; never returned"`
}

func checkSecretName(name string) error {
	if err := permissions.CheckSecretName(name); err != nil {
		return &skilld.Error{Code: skilld.EINVALID, Message: err.Error(), Details: []skilld.Detail{{Field: "name", Message: err.Error()}}}
	}
	return nil
}

// PutSecret stores or replaces a secret of the workspace (admins), sealed
// under the server's secrets key before it reaches the store.
func (s *Service) PutSecret(ctx context.Context, a Actor, p PutSecretParams) error {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return err
	}
	if err := checkSecretName(p.Name); err != nil {
		return err
	}
	switch {
	case len(p.Value) < MinSecretSize || len(p.Value) > MaxSecretSize:
		return &skilld.Error{Code: skilld.EINVALID, Message: fmt.Sprintf("a secret's value must be %d to %d bytes (a shorter one could not be told apart from ordinary output, and so could not be kept out of task logs)", MinSecretSize, MaxSecretSize),
			Details: []skilld.Detail{{Field: "value", Message: fmt.Sprintf("%d bytes", len(p.Value))}}}
	case strings.IndexByte(p.Value, 0) >= 0:
		return &skilld.Error{Code: skilld.EINVALID, Message: "a secret's value must not hold a NUL byte: it is given to commands as an environment variable",
			Details: []skilld.Detail{{Field: "value", Message: "holds a NUL byte"}}}
	}
	keyID, sealed, err := s.cfg.Secrets.Seal(a.WorkspaceID, p.Name, []byte(p.Value))
	if err != nil {
		return err
	}
	if _, err := s.db.SecretPut(ctx, &store.SecretPutParams{WorkspaceID: a.WorkspaceID, Name: p.Name, KeyID: keyID, Ciphertext: sealed, UpdatedBy: a.Name}); err != nil {
		return err
	}
	s.event(ctx, a, a.WorkspaceID, "secret.put", p.Name)
	return nil
}

type ListSecretsParams struct{}

type SecretList struct {
	Items []skilld.Secret `json:"items"`
}

// ListSecrets lists the workspace's secrets by name, never their values
// (viewers and up).
func (s *Service) ListSecrets(ctx context.Context, a Actor, _ ListSecretsParams) (*SecretList, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	items, err := s.db.SecretList(ctx, &store.SecretListParams{WorkspaceID: a.WorkspaceID})
	if err != nil {
		return nil, err
	}
	return &SecretList{Items: items}, nil
}

// DeleteSecret deletes a secret of the workspace (admins).
func (s *Service) DeleteSecret(ctx context.Context, a Actor, p SecretRef) error {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return err
	}
	if err := checkSecretName(p.Name); err != nil {
		return err
	}
	if err := s.db.SecretDelete(ctx, &store.SecretGetParams{WorkspaceID: a.WorkspaceID, Name: p.Name}); err != nil {
		return err
	}
	s.event(ctx, a, a.WorkspaceID, "secret.deleted", p.Name)
	return nil
}

// SecretValue opens a secret for a run that was granted it; the sandbox
// step that injects granted secrets is its caller.
func (s *Service) SecretValue(ctx context.Context, workspaceID, name string) ([]byte, error) {
	sec, err := s.db.SecretGet(ctx, &store.SecretGetParams{WorkspaceID: workspaceID, Name: name})
	if err != nil {
		return nil, err
	}
	return s.cfg.Secrets.Open(sec.KeyID, sec.Ciphertext, workspaceID, name)
}

type ResealSecretsParams struct{}

type ResealResult struct {
	Resealed int `json:"resealed"`
}

// ResealSecrets seals again, under the current key, every secret of the
// workspace sealed under another one (key rotation: the server runs with
// the new key and the old one given as an old key, then without it).
func (s *Service) ResealSecrets(ctx context.Context, a Actor, _ ResealSecretsParams) (*ResealResult, error) {
	n, err := s.reseal(ctx, a)
	if err != nil {
		return nil, err
	}
	return &ResealResult{Resealed: n}, nil
}

func (s *Service) reseal(ctx context.Context, a Actor) (int, error) {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return 0, err
	}
	current, _, err := s.cfg.Secrets.Seal("", "", nil)
	if err != nil {
		return 0, err
	}
	list, err := s.db.SecretList(ctx, &store.SecretListParams{WorkspaceID: a.WorkspaceID})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, sec := range list {
		sealed, err := s.db.SecretGet(ctx, &store.SecretGetParams{WorkspaceID: a.WorkspaceID, Name: sec.Name})
		if err != nil {
			return n, err
		}
		if sealed.KeyID == current {
			continue
		}
		value, err := s.cfg.Secrets.Open(sealed.KeyID, sealed.Ciphertext, a.WorkspaceID, sec.Name)
		if err != nil {
			return n, err
		}
		keyID, c, err := s.cfg.Secrets.Seal(a.WorkspaceID, sec.Name, value)
		if err != nil {
			return n, err
		}
		if _, err := s.db.SecretPut(ctx, &store.SecretPutParams{WorkspaceID: a.WorkspaceID, Name: sec.Name, KeyID: keyID, Ciphertext: c, UpdatedBy: sealed.UpdatedBy}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
