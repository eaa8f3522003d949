package store

import (
	"context"

	"github.com/skilld/skilld"
)

// ScanQueries persist what the package scanner found in each package, one
// scan per package: the latest, with the version of the rules it ran.
type ScanQueries interface {
	// PackageScanPut stores the scan of a package, replacing one made
	// under another rules version. ENOTFOUND when the package is not
	// stored.
	PackageScanPut(ctx context.Context, p *PackageScanPutParams) error
	// PackageScanGet returns the stored scan of a package. ENOTFOUND when
	// it was never scanned.
	PackageScanGet(ctx context.Context, p *PackageScanGetParams) (*skilld.PackageScan, error)
	// PackageScanStale lists the digests of stored packages without a
	// scan under RulesVersion (never scanned, or under another version),
	// in digest order, Limit at a time, after the digest After.
	PackageScanStale(ctx context.Context, p *PackageScanStaleParams) ([]string, error)
}

type PackageScanPutParams struct {
	Digest       string
	RulesVersion int
	Findings     []skilld.Finding
}

type PackageScanGetParams struct{ Digest string }

type PackageScanStaleParams struct {
	RulesVersion int
	After        string
	Limit        int
}
