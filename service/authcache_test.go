package service_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// lookups counts the token and workspace reads that reach the store.
type lookups struct {
	store.Store
	tokens, workspaces atomic.Int64
}

func (l *lookups) TokenGetByHash(ctx context.Context, p *store.TokenGetByHashParams) (*skilld.Token, error) {
	l.tokens.Add(1)
	return l.Store.TokenGetByHash(ctx, p)
}

func (l *lookups) WorkspaceGet(ctx context.Context, p *store.WorkspaceGetParams) (*skilld.Workspace, error) {
	l.workspaces.Add(1)
	return l.Store.WorkspaceGet(ctx, p)
}

// clock is a settable time for services under test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// Two servers on one database: each caches what it read of tokens and
// workspaces for AuthCacheTTL. A revocation through one server takes effect
// there at once and on the other within AuthCacheTTL; an expiry takes
// effect at the expiry, cached or not.
func TestAuthCache(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			db := &lookups{Store: d.Open(t)}
			clk := &clock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
			a, b, root := twoServers(t, db, service.Config{Now: clk.Now})
			member, err := a.CreateToken(t.Context(), root, service.CreateTokenParams{Name: "ci", Role: skilld.RoleMember})
			if err != nil {
				t.Fatal(err)
			}
			brief, err := a.CreateToken(t.Context(), root, service.CreateTokenParams{Name: "brief", Role: skilld.RoleMember, ExpiresIn: "1h"})
			if err != nil {
				t.Fatal(err)
			}

			// Repeated requests read the token and the workspace once.
			before, wsBefore := db.tokens.Load(), db.workspaces.Load()
			for range 100 {
				actor, err := b.Authenticate(t.Context(), member.Secret)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := b.In(t.Context(), actor, "default"); err != nil {
					t.Fatal(err)
				}
			}
			if n, w := db.tokens.Load()-before, db.workspaces.Load()-wsBefore; n != 1 || w > 2 {
				t.Errorf("100 requests read the token %d times and the workspace %d times, want 1 and at most 2", n, w)
			}

			// Revoked through a: refused by a at once, by b within the TTL.
			if err := a.RevokeToken(t.Context(), root, service.RevokeTokenParams{ID: member.ID}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Authenticate(t.Context(), member.Secret); skilld.ErrorCode(err) != skilld.EUNAUTHORIZED {
				t.Errorf("the revoking server still takes the token: %v", err)
			}
			clk.add(service.AuthCacheTTL - time.Millisecond)
			if _, err := b.Authenticate(t.Context(), member.Secret); err != nil {
				t.Errorf("within the TTL the other server still trusts its cache, as documented: %v", err)
			}
			clk.add(time.Millisecond)
			if _, err := b.Authenticate(t.Context(), member.Secret); skilld.ErrorCode(err) != skilld.EUNAUTHORIZED {
				t.Errorf("AuthCacheTTL after the revocation the other server still takes the token: %v", err)
			}

			// Expiry needs no new read: a cached token expires on time.
			if _, err := b.Authenticate(t.Context(), brief.Secret); err != nil {
				t.Fatal(err)
			}
			clk.add(brief.ExpiresAt.Sub(clk.Now()) - time.Millisecond)
			if _, err := b.Authenticate(t.Context(), brief.Secret); err != nil {
				t.Fatalf("before its expiry: %v", err)
			}
			clk.add(time.Millisecond)
			if _, err := b.Authenticate(t.Context(), brief.Secret); skilld.ErrorCode(err) != skilld.EUNAUTHORIZED {
				t.Errorf("an expired token was taken: %v", err)
			}

			// A workspace created through a is found by b at once: misses
			// are not cached.
			if _, err := b.In(t.Context(), root, "fresh"); skilld.ErrorCode(err) != skilld.ENOTFOUND {
				t.Fatalf("workspace fresh before it exists: %v", err)
			}
			if _, err := a.CreateWorkspace(t.Context(), root, service.CreateWorkspaceParams{Name: "fresh"}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.In(t.Context(), root, "fresh"); err != nil {
				t.Errorf("a new workspace is not found by the other server: %v", err)
			}
		})
	}
}

// twoServers returns two services on one database, as two skilld
// servers sharing it, and the instance admin bootstrapped through a.
func twoServers(t *testing.T, db store.Store, cfg service.Config) (a, b *service.Service, root service.Actor) {
	t.Helper()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b = service.New(db, blobs, nil, cfg), service.New(db, blobs, nil, cfg)
	secret, err := a.Bootstrap(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	root, err = a.Authenticate(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	return a, b, root
}
