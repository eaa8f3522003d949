// Package service is where skilld's business rules live: skills, versions,
// catalog, installs, policy and imports. The REST API, the CLI and the agent
// toolset are thin adapters over it.
package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/scan"
	"github.com/skilld/skilld/store"
)

// PackageStore stores and reads skill packages: each file's bytes as a blob
// addressed by its own digest (shared by every package holding the same
// bytes), the manifest and file list as rows.
type PackageStore struct {
	DB    store.Store
	Blobs blob.Store
	// Scanner scans each package stored (nil: none is).
	Scanner *scan.Scanner
}

// cleanupTimeout bounds deleting what a failed Put or a deleted skill left
// behind, which runs even when the caller's context is already done.
const cleanupTimeout = 30 * time.Second

// Put stores a package, all or nothing. It uploads the blobs that are not
// stored yet, then writes the package and its files in one transaction,
// together with whatever then writes in the same transaction (the skill or
// version that uses the package; nil for none). If anything fails, it
// deletes the blobs it uploaded that no stored package refers to, and never
// a blob another package uses; the rows were never committed. Storing a
// package that exists changes nothing, but for its scan: a package not
// yet scanned under the scanner's rules is scanned before the transaction
// and its findings written in it, so a stored package has its findings
// from the moment it is visible.
//
// Deleting unreferenced blobs races with other writers that rely on those
// blobs but have not committed yet. The store's blob guard settles it: the
// cleanup holds it exclusively and bumps an epoch, so a writer that sees the
// epoch change between its uploads and its commit checks its blobs again
// and re-uploads any that went missing.
func (p *PackageStore) Put(ctx context.Context, pkg *pack.Package, then func(q store.Querier) error) (err error) {
	epoch, err := p.DB.BlobGuard(ctx, &store.BlobGuardParams{})
	if err != nil {
		return err
	}
	var added []string
	defer func() {
		if err != nil && len(added) > 0 {
			if cerr := p.cleanup(ctx, added); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
	}()
	findings, err := p.scanIfNeeded(ctx, pkg)
	if err != nil {
		return err
	}
	files := pkg.Files()
	entries := pkg.Entries()
	seen := make(map[string]bool, len(entries))
	for i, e := range entries {
		if seen[e.Digest] {
			continue
		}
		seen[e.Digest] = true
		_, statErr := p.Blobs.Stat(ctx, e.Digest)
		if statErr != nil && !errors.Is(statErr, blob.ErrNotFound) {
			return fmt.Errorf("storing package %s: %w", pkg.Digest(), statErr)
		}
		// Put even a blob that exists: the store checks the stored copy
		// and replaces it when it is damaged, so uploading the same files
		// again repairs them.
		if err := p.putBlob(ctx, e.Digest, files[i].Data); err != nil {
			return fmt.Errorf("storing package %s: file %q: %w", pkg.Digest(), e.Path, err)
		}
		if statErr != nil { // it was missing: this Put added it
			added = append(added, e.Digest)
		}
	}
	var res *store.PackageCreateResult
	err = p.DB.Tx(ctx, func(q store.Querier) error {
		var err error
		if res, err = q.PackageCreate(ctx, packageParams(pkg)); err != nil {
			return err
		}
		if findings != nil {
			if err := q.PackageScanPut(ctx, &store.PackageScanPutParams{Digest: pkg.Digest(), RulesVersion: p.Scanner.Version(), Findings: findings}); err != nil {
				return err
			}
		}
		if then != nil {
			return then(q)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if res.Epoch != epoch {
		return p.ensureBlobs(ctx, pkg)
	}
	return nil
}

// putBlob uploads data and checks that the store agrees on its digest.
func (p *PackageStore) putBlob(ctx context.Context, digest string, data []byte) error {
	info, err := p.Blobs.Put(ctx, bytes.NewReader(data))
	if err != nil {
		return err
	}
	if info.Digest != digest {
		return skilld.Errorf(skilld.EINTERNAL, "blob store stored %s as %s", digest, info.Digest)
	}
	return nil
}

// ensureBlobs re-uploads any blob of a committed package that a concurrent
// cleanup deleted before the package's rows existed.
func (p *PackageStore) ensureBlobs(ctx context.Context, pkg *pack.Package) error {
	files := pkg.Files()
	for i, e := range pkg.Entries() {
		_, err := p.Blobs.Stat(ctx, e.Digest)
		if errors.Is(err, blob.ErrNotFound) {
			err = p.putBlob(ctx, e.Digest, files[i].Data)
		}
		if err != nil {
			return fmt.Errorf("package %s: restoring file %q: %w", pkg.Digest(), e.Path, err)
		}
	}
	return nil
}

// cleanup deletes the blobs a failed Put uploaded that no package refers to.
func (p *PackageStore) cleanup(ctx context.Context, added []string) error {
	return p.exclusively(ctx, func(ctx context.Context, q store.Querier) error {
		return p.deleteUnreferenced(ctx, q, added)
	})
}

// Release deletes the packages among digests that no skill version or
// catalog version refers to any more, and then the blobs no remaining
// package uses: what deleting a skill leaves behind.
func (p *PackageStore) Release(ctx context.Context, digests []string) error {
	return p.Free(ctx, digests, nil)
}

// Free is Release of packages that also deletes the blobs among blobs
// that nothing refers to any more (a deleted task's outputs), by the rule
// fsck --repair applies and under the same exclusive blob guard: no
// stored package uses them as a file and no task as an output.
func (p *PackageStore) Free(ctx context.Context, packages, blobs []string) error {
	if len(packages)+len(blobs) == 0 {
		return nil
	}
	return p.exclusively(ctx, func(ctx context.Context, q store.Querier) error {
		used, err := q.PackageReferenced(ctx, &store.PackageReferencedParams{Digests: packages})
		if err != nil {
			return err
		}
		free := slices.Clone(blobs)
		for _, d := range packages {
			if used[d] {
				continue
			}
			files, err := q.PackageFileList(ctx, &store.PackageFileListParams{Digest: d})
			if err != nil {
				return err
			}
			for _, f := range files {
				free = append(free, f.Digest)
			}
			if err := q.PackageDelete(ctx, &store.PackageDeleteParams{Digest: d}); err != nil {
				return err
			}
		}
		if len(free) == 0 {
			return nil
		}
		return p.deleteUnreferenced(ctx, q, free)
	})
}

// exclusively runs fn in a transaction holding the blob guard exclusively,
// so no package using a blob fn deletes can commit meanwhile. It runs even
// when ctx is already done (it frees storage after the fact), within
// cleanupTimeout.
func (p *PackageStore) exclusively(ctx context.Context, fn func(ctx context.Context, q store.Querier) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	return p.DB.Tx(ctx, func(q store.Querier) error {
		if _, err := q.BlobGuard(ctx, &store.BlobGuardParams{Exclusive: true}); err != nil {
			return err
		}
		return fn(ctx, q)
	})
}

// deleteUnreferenced deletes the blobs among digests that no stored package
// refers to; the caller holds the blob guard exclusively.
func (p *PackageStore) deleteUnreferenced(ctx context.Context, q store.Querier, digests []string) error {
	used, err := q.BlobReferenced(ctx, &store.BlobReferencedParams{Digests: digests})
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range digests {
		if !used[d] {
			if err := p.Blobs.Delete(ctx, d); err != nil {
				errs = append(errs, fmt.Errorf("deleting blob %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

func packageParams(pkg *pack.Package) *store.PackageCreateParams {
	entries := pkg.Entries()
	files := make([]skilld.PackageFile, len(entries))
	for i, e := range entries {
		files[i] = skilld.PackageFile{Path: e.Path, Digest: e.Digest, Size: e.Size, Exec: e.Exec}
	}
	return &store.PackageCreateParams{Digest: pkg.Digest(), Manifest: pkg.Manifest(), Size: pkg.Size(), Files: files}
}

// Get reads a stored package back: every file from the blob store, checked
// against its digest, and the whole package against its own.
func (p *PackageStore) Get(ctx context.Context, digest string) (*pack.Package, error) {
	if _, _, err := p.DB.PackageGet(ctx, &store.PackageGetParams{Digest: digest}); err != nil {
		return nil, err
	}
	list, err := p.DB.PackageFileList(ctx, &store.PackageFileListParams{Digest: digest})
	if err != nil {
		return nil, err
	}
	files := make([]pack.File, len(list))
	for i, f := range list {
		data, err := p.ReadFile(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("package %s: %w", digest, err)
		}
		files[i] = pack.File{Path: f.Path, Data: data, Exec: f.Exec}
	}
	pkg, err := pack.New(files, pack.Limits{})
	if err != nil {
		return nil, fmt.Errorf("package %s: %w", digest, err)
	}
	if pkg.Digest() != digest {
		return nil, skilld.Errorf(skilld.EINTEGRITY, "the stored copy of package %s is damaged: its files read back as %s: %w", digest, pkg.Digest(), blob.ErrIntegrity)
	}
	return pkg, nil
}

// ReadFile reads one file of a stored package, verified against its digest
// before any byte of it is returned. A damaged stored copy is EINTEGRITY
// naming the file.
func (p *PackageStore) ReadFile(ctx context.Context, f skilld.PackageFile) ([]byte, error) {
	rc, err := p.Blobs.Open(ctx, f.Digest)
	if err != nil {
		return nil, fileError(f, err)
	}
	defer rc.Close()
	data := make([]byte, 0, f.Size)
	buf := bytes.NewBuffer(data)
	if _, err := io.Copy(buf, rc); err != nil {
		return nil, fileError(f, err)
	}
	return buf.Bytes(), nil
}

// fileError names the file a blob error is about; a damaged blob gets the
// message an operator can act on.
func fileError(f skilld.PackageFile, err error) error {
	if errors.Is(err, blob.ErrIntegrity) {
		return skilld.Errorf(skilld.EINTEGRITY, "the stored copy of file %q (%s) is damaged: %w; upload the file again to repair it, or run skilld fsck", f.Path, f.Digest, err)
	}
	return fmt.Errorf("file %q: %w", f.Path, err)
}

// Package reads a stored package; it makes Packages the package source of
// the agent runtime.
func (p *PackageStore) Package(ctx context.Context, digest string) (*pack.Package, error) {
	return p.Get(ctx, digest)
}
