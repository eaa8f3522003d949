package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/store"
)

// scanIfNeeded scans a package about to be stored unless its stored scan
// is under the scanner's rules already; nil findings mean nothing to
// write.
func (p *PackageStore) scanIfNeeded(ctx context.Context, pkg *pack.Package) ([]skilld.Finding, error) {
	if p.Scanner == nil {
		return nil, nil
	}
	sc, err := p.DB.PackageScanGet(ctx, &store.PackageScanGetParams{Digest: pkg.Digest()})
	switch {
	case err == nil && sc.RulesVersion == p.Scanner.Version():
		return nil, nil
	case err != nil && skilld.ErrorCode(err) != skilld.ENOTFOUND:
		return nil, err
	}
	return p.Scanner.Scan(ctx, pkg)
}

// Scan returns what the scanner found in a stored package under its
// current rules: the stored scan, or, for a package stored before those
// rules (or before there was a scanner), a scan made now from the
// verified stored copy and stored for next time. Packages are immutable,
// so each is read for scanning once per rules version.
func (p *PackageStore) Scan(ctx context.Context, digest string) (*skilld.PackageScan, error) {
	if p.Scanner == nil {
		return nil, skilld.Errorf(skilld.EUNAVAILABLE, "this server has no package scanner")
	}
	sc, err := p.DB.PackageScanGet(ctx, &store.PackageScanGetParams{Digest: digest})
	if err == nil && sc.RulesVersion == p.Scanner.Version() {
		return sc, nil
	}
	if err != nil && skilld.ErrorCode(err) != skilld.ENOTFOUND {
		return nil, err
	}
	pkg, err := p.Get(ctx, digest)
	if err != nil {
		return nil, err
	}
	findings, err := p.Scanner.Scan(ctx, pkg)
	if err != nil {
		return nil, fmt.Errorf("scanning package %s: %w", digest, err)
	}
	if err := p.DB.PackageScanPut(ctx, &store.PackageScanPutParams{Digest: digest, RulesVersion: p.Scanner.Version(), Findings: findings}); err != nil {
		return nil, err
	}
	return p.DB.PackageScanGet(ctx, &store.PackageScanGetParams{Digest: digest})
}

// Rescan scans every stored package whose scan is not under the current
// rules (after a rules update, or packages from before the scanner), a
// page at a time, and returns how many it scanned. Packages scanned
// under the current rules are not read. A package that cannot be scanned
// (a damaged stored copy) does not stop the others: the errors are
// returned together at the end.
func (p *PackageStore) Rescan(ctx context.Context) (int, error) {
	if p.Scanner == nil {
		return 0, nil
	}
	var errs []error
	n, after := 0, ""
	for {
		digests, err := p.DB.PackageScanStale(ctx, &store.PackageScanStaleParams{RulesVersion: p.Scanner.Version(), After: after, Limit: 100})
		if err != nil || len(digests) == 0 {
			return n, errors.Join(append(errs, err)...)
		}
		for _, d := range digests {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			if _, err := p.Scan(ctx, d); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
		after = digests[len(digests)-1]
	}
}
