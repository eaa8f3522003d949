package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// tokenPrefix marks skilld secrets, so secret scanners and people can tell
// what leaked.
const tokenPrefix = "skd_"

// newSecret returns a fresh API token secret: 160 random bits.
func newSecret() string {
	b := make([]byte, 20)
	rand.Read(b)
	return tokenPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// HashToken is what is stored for a secret: its SHA-256. Secrets are random
// and long, so a fast hash is enough; a slow one would only slow every
// request.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

type CreateTokenParams struct {
	Name string      `json:"name" jsonschema:"what the token is for"`
	Role skilld.Role `json:"role" jsonschema:"admin, member or viewer"`
	// ExpiresIn is a Go duration ("720h"); empty means no expiry.
	ExpiresIn string `json:"expires_in,omitempty" jsonschema:"lifetime as a duration such as 720h; empty for no expiry"`
}

// NewToken is a created token with its secret, shown only this once.
type NewToken struct {
	*skilld.Token
	Secret string `json:"token"`
}

// CreateToken creates a token in the actor's workspace (admins only). A
// token never has more rights than its creator.
func (s *Service) CreateToken(ctx context.Context, a Actor, p CreateTokenParams) (*NewToken, error) {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return nil, err
	}
	return s.createToken(ctx, a, p, false)
}

// CreateInstanceAdminToken creates an instance-admin token in the actor's
// workspace, for an instance admin: the way back in for an operator who
// lost every admin token and opens the storage directly (skilld tokens
// create --admin). The API offers no such operation: a token made through
// it is never an instance admin.
func (s *Service) CreateInstanceAdminToken(ctx context.Context, a Actor, p CreateTokenParams) (*NewToken, error) {
	if err := errors.Join(a.requireInstanceAdmin(), a.can(skilld.RoleAdmin)); err != nil {
		return nil, err
	}
	if p.Role == "" {
		p.Role = skilld.RoleAdmin
	}
	if p.Role != skilld.RoleAdmin {
		return nil, invalidField("role", "an instance-admin token has the admin role, not %q", p.Role)
	}
	return s.createToken(ctx, a, p, true)
}

func (s *Service) createToken(ctx context.Context, a Actor, p CreateTokenParams, instanceAdmin bool) (*NewToken, error) {
	name, err := DisplayName("name", p.Name)
	if err != nil {
		return nil, err
	}
	if !p.Role.Valid() {
		return nil, invalidField("role", "role must be admin, member or viewer, not %q", p.Role)
	}
	var expires *time.Time
	if p.ExpiresIn != "" {
		d, err := time.ParseDuration(p.ExpiresIn)
		if err != nil || d <= 0 {
			return nil, invalidField("expires_in", "expires_in must be a positive duration such as 720h, not %q", p.ExpiresIn)
		}
		t := s.cfg.Now().Add(d).UTC()
		expires = &t
	}
	secret := newSecret()
	t, err := s.db.TokenCreate(ctx, &store.TokenCreateParams{
		WorkspaceID: a.WorkspaceID, Name: name, Role: p.Role, InstanceAdmin: instanceAdmin, Hash: HashToken(secret), CreatedBy: a.Name, ExpiresAt: expires,
	})
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "token.created", t.ID)
	return &NewToken{Token: t, Secret: secret}, nil
}

type ListTokensParams struct{ Page }

type TokenList struct {
	Items []*skilld.Token `json:"items"`
}

// ListTokens lists the workspace's tokens (admins only); secrets are never
// shown again.
func (s *Service) ListTokens(ctx context.Context, a Actor, p ListTokensParams) (*TokenList, error) {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return nil, err
	}
	pg, _, err := p.normalize()
	if err != nil {
		return nil, err
	}
	ts, err := s.db.TokenList(ctx, &store.TokenListParams{WorkspaceID: a.WorkspaceID, Page: pg})
	if ts == nil {
		ts = []*skilld.Token{}
	}
	return &TokenList{Items: ts}, err
}

type RevokeTokenParams struct {
	ID string `json:"id" path:"id"`
}

// RevokeToken revokes a token of the workspace (admins only).
func (s *Service) RevokeToken(ctx context.Context, a Actor, p RevokeTokenParams) error {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return err
	}
	if err := s.db.TokenRevoke(ctx, &store.TokenRevokeParams{WorkspaceID: a.WorkspaceID, ID: p.ID, At: s.cfg.Now()}); err != nil {
		return err
	}
	// At once on this server; other servers within AuthCacheTTL.
	s.auth.tokens.drop(func(t skilld.Token) bool { return t.ID == p.ID })
	s.event(ctx, a, a.WorkspaceID, "token.revoked", p.ID)
	return nil
}

// touchInterval limits how often a token's last use is written: once a
// minute is precise enough and keeps reads from becoming writes.
const touchInterval = time.Minute

// Authenticate resolves an API token secret to its actor. Unknown, revoked
// and expired tokens are EUNAUTHORIZED with a message that does not say
// which (that would help guessing).
func (s *Service) Authenticate(ctx context.Context, secret string) (Actor, error) {
	if !strings.HasPrefix(secret, tokenPrefix) {
		return Actor{}, skilld.Errorf(skilld.EUNAUTHORIZED, "invalid, expired or revoked token")
	}
	hash := HashToken(secret)
	now := s.cfg.Now()
	var t *skilld.Token
	var err error
	if c, ok := s.auth.tokens.get(hash, now); ok {
		t = &c
	} else if t, err = s.db.TokenGetByHash(ctx, &store.TokenGetByHashParams{Hash: hash}); err == nil {
		s.auth.tokens.put(hash, *t, now)
	}
	if err != nil || !t.Active(now) {
		if err != nil && skilld.ErrorCode(err) != skilld.ENOTFOUND {
			return Actor{}, err
		}
		return Actor{}, skilld.Errorf(skilld.EUNAUTHORIZED, "invalid, expired or revoked token")
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > touchInterval {
		s.db.TokenTouch(context.WithoutCancel(ctx), &store.TokenTouchParams{ID: t.ID, At: now})
		touched := *t
		touched.LastUsedAt = &now
		s.auth.tokens.update(hash, touched)
	}
	return Actor{WorkspaceID: t.WorkspaceID, Role: t.Role, InstanceAdmin: t.InstanceAdmin, Name: tokenActor + t.Name, TokenID: t.ID, tokenWorkspace: t.WorkspaceID}, nil
}

// tokenActor starts the actor name of a token's holder, "token:ci", as
// created_by fields and events show it.
const tokenActor = "token:"

type TokenSelfParams struct{}

// TokenSelf is what a token's holder may know about the token: enough for
// a client to act in the token's own workspace without being told which.
type TokenSelf struct {
	ID            string      `json:"id"`
	Name          string      `json:"name"`
	Role          skilld.Role `json:"role"`
	InstanceAdmin bool        `json:"instance_admin,omitempty"`
	WorkspaceID   string      `json:"workspace_id"`
	WorkspaceName string      `json:"workspace_name"`
}

// Self describes the caller's own token (any role). It reads
// only what authentication already holds, plus the workspace's name.
func (s *Service) Self(ctx context.Context, a Actor, _ TokenSelfParams) (*TokenSelf, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	if a.TokenID == "" {
		return nil, skilld.Errorf(skilld.EUNAUTHORIZED, "this caller does not act for an API token")
	}
	// The token's own workspace, also for an instance admin acting in
	// another one.
	wsID := a.tokenWorkspace
	if wsID == "" {
		wsID = a.WorkspaceID
	}
	w, err := s.findWorkspace(ctx, wsID)
	if err != nil {
		return nil, err
	}
	return &TokenSelf{ID: a.TokenID, Name: strings.TrimPrefix(a.Name, tokenActor), Role: a.Role, InstanceAdmin: a.InstanceAdmin,
		WorkspaceID: w.ID, WorkspaceName: w.Name}, nil
}

// BootstrapWorkspace is the workspace made on first start.
const BootstrapWorkspace = "default"

// Bootstrap prepares an empty installation: it creates the "default"
// workspace and an instance-admin token whose secret is secret, or a
// generated one when secret is empty. It returns the secret, or "" when the
// database already has workspaces (nothing is done then).
func (s *Service) Bootstrap(ctx context.Context, secret string) (string, error) {
	ws, err := s.db.WorkspaceList(ctx, &store.WorkspaceListParams{Page: store.Page{Limit: 1}})
	if err != nil || len(ws) > 0 {
		return "", err
	}
	if secret == "" {
		secret = newSecret()
	} else if !strings.HasPrefix(secret, tokenPrefix) || len(secret) < len(tokenPrefix)+20 {
		return "", skilld.Errorf(skilld.EINVALID, "bootstrap token must start with %q and have at least 20 characters after it", tokenPrefix)
	}
	err = s.db.Tx(ctx, func(q store.Querier) error {
		w, err := q.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: BootstrapWorkspace})
		if err != nil {
			return err
		}
		_, err = q.TokenCreate(ctx, &store.TokenCreateParams{
			WorkspaceID: w.ID, Name: "bootstrap", Role: skilld.RoleAdmin, InstanceAdmin: true, Hash: HashToken(secret), CreatedBy: "bootstrap",
		})
		return err
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// BootstrapTokenActive reports whether secret is an active token, without
// counting as a use of it: a server started again with the bootstrap
// token it was first started with is not ignoring it.
func (s *Service) BootstrapTokenActive(ctx context.Context, secret string) (bool, error) {
	t, err := s.db.TokenGetByHash(ctx, &store.TokenGetByHashParams{Hash: HashToken(secret)})
	switch {
	case skilld.ErrorCode(err) == skilld.ENOTFOUND:
		return false, nil
	case err != nil:
		return false, err
	}
	return t.Active(s.cfg.Now()), nil
}
