package agent

import (
	"context"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/outage"
	"github.com/skilld/skilld/pack"
)

// PackageSource reads skill packages by digest. The server's implementation
// reads the stores (service.PackageStore); MemoryPackages serves packages read
// from disk.
type PackageSource interface {
	Package(ctx context.Context, digest string) (*pack.Package, error)
}

// MemoryPackages holds packages in memory, by digest.
type MemoryPackages struct {
	mu   sync.Mutex
	pkgs map[string]*pack.Package
}

// Add stores a package and returns its digest.
func (m *MemoryPackages) Add(p *pack.Package) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pkgs == nil {
		m.pkgs = map[string]*pack.Package{}
	}
	m.pkgs[p.Digest()] = p
	return p.Digest()
}

// Package returns a stored package.
func (m *MemoryPackages) Package(_ context.Context, digest string) (*pack.Package, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.pkgs[digest]; ok {
		return p, nil
	}
	return nil, skilld.Errorf(skilld.ENOTFOUND, "package %s not found", digest)
}

// fetchPackage reads a package, waiting out unreachable storage: a store
// that blinks must not fail a skill.
func fetchPackage(ctx context.Context, src PackageSource, digest string, deadline time.Duration) (*pack.Package, error) {
	var p *pack.Package
	err := outage.WaitOut(ctx, deadline, "package storage", func(ctx context.Context) (err error) {
		p, err = src.Package(ctx, digest)
		return err
	})
	return p, err
}
