package sqldb

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

func (q *Queries) PackageScanPut(ctx context.Context, p *store.PackageScanPutParams) error {
	findings := p.Findings
	if findings == nil {
		findings = []skilld.Finding{}
	}
	data, err := json.Marshal(findings)
	if err != nil {
		return err
	}
	_, err = q.c.Exec(ctx, `INSERT INTO package_scans (package_digest, rules_version, findings, scanned_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (package_digest) DO UPDATE SET rules_version = excluded.rules_version, findings = excluded.findings, scanned_at = excluded.scanned_at`,
		p.Digest, p.RulesVersion, string(data), now())
	if constraint(err, "foreign_key") != nil {
		return &skilld.Error{Code: skilld.ENOTFOUND, Message: "package " + p.Digest + " not found", Err: err}
	}
	return internal(err, "storing the scan of package %s", p.Digest)
}

func (q *Queries) PackageScanGet(ctx context.Context, p *store.PackageScanGetParams) (*skilld.PackageScan, error) {
	sc := &skilld.PackageScan{Digest: p.Digest}
	var findings string
	err := q.c.QueryRow(ctx, `SELECT rules_version, findings, scanned_at FROM package_scans WHERE package_digest = ?`, p.Digest).
		Scan(&sc.RulesVersion, &findings, &sc.ScannedAt)
	if err != nil {
		return nil, notFound(err, "scan of package %s", p.Digest)
	}
	sc.ScannedAt = utc(sc.ScannedAt)
	if err := json.Unmarshal([]byte(findings), &sc.Findings); err != nil {
		return nil, fmt.Errorf("decoding the scan of package %s: %w", p.Digest, err)
	}
	return sc, nil
}

func (q *Queries) PackageScanStale(ctx context.Context, p *store.PackageScanStaleParams) ([]string, error) {
	limit := p.Limit
	if limit <= 0 || limit > store.MaxPageSize {
		limit = store.MaxPageSize
	}
	rows, err := q.c.Query(ctx, `SELECT p.digest FROM packages p LEFT JOIN package_scans s ON s.package_digest = p.digest
		WHERE p.digest > ? AND (s.rules_version IS NULL OR s.rules_version <> ?) ORDER BY p.digest LIMIT ?`, p.After, p.RulesVersion, limit)
	out, err := collect(rows, err, scanValue[string])
	return out, internal(err, "listing packages to scan")
}
