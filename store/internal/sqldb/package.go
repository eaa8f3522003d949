package sqldb

import (
	"context"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

// fileBatch bounds the rows per multi-row INSERT: far below the parameter
// limits of both databases, large enough that a 1,000-file package is a
// handful of statements.
const fileBatch = 200

func (q *Queries) PackageCreate(ctx context.Context, p *store.PackageCreateParams) (*store.PackageCreateResult, error) {
	res := &store.PackageCreateResult{}
	err := q.tx(ctx, func(q *Queries) error {
		epoch, err := q.BlobGuard(ctx, &store.BlobGuardParams{})
		if err != nil {
			return err
		}
		res.Epoch = epoch
		n, err := q.c.Exec(ctx, `INSERT INTO packages (digest, manifest, total_size, file_count, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING`, p.Digest, p.Manifest, p.Size, len(p.Files), now())
		if err != nil {
			return internal(err, "storing package %s", p.Digest)
		}
		if n == 0 {
			return nil // already stored: packages are immutable
		}
		res.Created = true
		for start := 0; start < len(p.Files); start += fileBatch {
			batch := p.Files[start:min(start+fileBatch, len(p.Files))]
			args := make([]any, 0, 5*len(batch))
			for _, f := range batch {
				mode := 0o644
				if f.Exec {
					mode = 0o755
				}
				args = append(args, p.Digest, f.Path, f.Digest, f.Size, mode)
			}
			values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?), ", len(batch)), ", ")
			if _, err := q.c.Exec(ctx, `INSERT INTO package_files (package_digest, path, file_digest, size, mode) VALUES `+values, args...); err != nil {
				return internal(err, "storing files of package %s", p.Digest)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (q *Queries) PackageGet(ctx context.Context, p *store.PackageGetParams) (*skilld.PackageInfo, []byte, error) {
	var info skilld.PackageInfo
	var manifest []byte
	err := q.c.QueryRow(ctx, `SELECT digest, manifest, total_size, file_count, created_at FROM packages WHERE digest = ?`, p.Digest).
		Scan(&info.Digest, &manifest, &info.Size, &info.FileCount, &info.CreatedAt)
	if err != nil {
		return nil, nil, notFound(err, "package %s", p.Digest)
	}
	info.CreatedAt = utc(info.CreatedAt)
	return &info, manifest, nil
}

func (q *Queries) PackageList(ctx context.Context, p *store.PackageListParams) ([]skilld.PackageInfo, error) {
	limit := p.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	rows, err := q.c.Query(ctx, `SELECT digest, total_size, file_count, created_at FROM packages WHERE digest > ? ORDER BY digest LIMIT ?`, p.After, limit)
	out, err := collect(rows, err, func(r Row) (skilld.PackageInfo, error) {
		var info skilld.PackageInfo
		err := r.Scan(&info.Digest, &info.Size, &info.FileCount, &info.CreatedAt)
		info.CreatedAt = utc(info.CreatedAt)
		return info, err
	})
	return out, internal(err, "listing packages")
}

func (q *Queries) PackageFileList(ctx context.Context, p *store.PackageFileListParams) ([]skilld.PackageFile, error) {
	rows, err := q.c.Query(ctx, `SELECT path, file_digest, size, mode FROM package_files WHERE package_digest = ? ORDER BY path`, p.Digest)
	files, err := collect(rows, err, func(r Row) (skilld.PackageFile, error) {
		var f skilld.PackageFile
		var mode int
		err := r.Scan(&f.Path, &f.Digest, &f.Size, &mode)
		f.Exec = mode&0o111 != 0
		return f, err
	})
	return files, internal(err, "listing files of package %s", p.Digest)
}

func (q *Queries) BlobReferenced(ctx context.Context, p *store.BlobReferencedParams) (map[string]bool, error) {
	return q.present(ctx, `SELECT file_digest FROM package_files WHERE file_digest IN (%[1]s)
		UNION SELECT digest FROM task_outputs WHERE digest IN (%[1]s)`, p.Digests, "checking blob references")
}

func (q *Queries) PackageReferenced(ctx context.Context, p *store.PackageReferencedParams) (map[string]bool, error) {
	return q.present(ctx, `SELECT package_digest FROM skill_versions WHERE package_digest IN (%[1]s)
		UNION SELECT package_digest FROM catalog_item_versions WHERE package_digest IN (%[1]s)
		UNION SELECT package_digest FROM task_packages WHERE package_digest IN (%[1]s)`, p.Digests, "checking package references")
}

// present runs a query returning the subset of values it finds, in
// batches; query has a %s (or %[1]s, repeated) where the placeholders go.
func (q *Queries) present(ctx context.Context, query string, values []string, what string) (map[string]bool, error) {
	out := make(map[string]bool)
	for start := 0; start < len(values); start += fileBatch {
		batch := values[start:min(start+fileBatch, len(values))]
		sql := fmt.Sprintf(query, placeholders(len(batch)))
		var args []any
		for range strings.Count(sql, "?") / len(batch) {
			for _, d := range batch {
				args = append(args, d)
			}
		}
		rows, err := q.c.Query(ctx, sql, args...)
		found, err := collect(rows, err, scanValue[string])
		if err != nil {
			return nil, internal(err, "%s", what)
		}
		for _, d := range found {
			out[d] = true
		}
	}
	return out, nil
}

func (q *Queries) PackageDelete(ctx context.Context, p *store.PackageDeleteParams) error {
	_, err := q.c.Exec(ctx, `DELETE FROM packages WHERE digest = ?`, p.Digest)
	if constraint(err, "foreign_key") != nil {
		return &skilld.Error{Code: skilld.EINVALID, Message: "package " + p.Digest + " is still used by a version", Err: err}
	}
	return internal(err, "deleting package %s", p.Digest)
}

func (q *Queries) BlobGuard(ctx context.Context, p *store.BlobGuardParams) (int64, error) {
	var epoch int64
	var err error
	if p.Exclusive {
		err = q.c.ExecRow(ctx, `UPDATE blob_guard SET epoch = epoch + 1 WHERE id = 1 RETURNING epoch`).Scan(&epoch)
	} else {
		err = q.c.QueryRow(ctx, `SELECT epoch FROM blob_guard WHERE id = 1 `+q.d.LockShared).Scan(&epoch)
	}
	return epoch, internal(err, "blob guard")
}
