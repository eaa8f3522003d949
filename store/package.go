package store

import (
	"context"

	"github.com/skilld/skilld"
)

// PackageQueries persist package manifests and their file lists. The file
// bytes live in the blob store, addressed by each file's digest.
type PackageQueries interface {
	// PackageCreate stores a package and its files. Storing a digest that
	// exists changes nothing (packages are immutable and content-addressed)
	// and returns Created false.
	PackageCreate(ctx context.Context, p *PackageCreateParams) (*PackageCreateResult, error)
	// PackageGet returns a package and its manifest. ENOTFOUND when missing.
	PackageGet(ctx context.Context, p *PackageGetParams) (*skilld.PackageInfo, []byte, error)
	// PackageList lists stored packages in digest order, Limit at a time,
	// starting after the digest After ("" for the start).
	PackageList(ctx context.Context, p *PackageListParams) ([]skilld.PackageInfo, error)
	// PackageFileList lists a package's files by path.
	PackageFileList(ctx context.Context, p *PackageFileListParams) ([]skilld.PackageFile, error)
	// PackageReferenced returns which of the package digests a skill
	// version, a catalog item version or an unfinished task refers to.
	PackageReferenced(ctx context.Context, p *PackageReferencedParams) (map[string]bool, error)
	// PackageDelete removes a package and its file list (not the blobs).
	// Deleting a missing package is not an error. EINVALID (a foreign key)
	// when a version still refers to it.
	PackageDelete(ctx context.Context, p *PackageDeleteParams) error
	// BlobReferenced returns which of the blob digests a stored package
	// (as a file) or a task (as an output) refers to.
	BlobReferenced(ctx context.Context, p *BlobReferencedParams) (map[string]bool, error)
	// BlobGuard coordinates deleting blobs with storing packages that use
	// them. Inside a transaction, Exclusive false (taken by PackageCreate)
	// waits for any exclusive holder and returns the current epoch;
	// Exclusive true (taken by whoever deletes unreferenced blobs) waits for
	// every holder, bumps the epoch and returns the new one. A writer that
	// sees the epoch unchanged between before its blob uploads and its
	// commit knows no blob was deleted under it.
	BlobGuard(ctx context.Context, p *BlobGuardParams) (int64, error)
}

type PackageCreateParams struct {
	Digest   string
	Manifest []byte
	Size     int64
	Files    []skilld.PackageFile
}

type PackageCreateResult struct {
	Created bool
	// Epoch is the blob epoch seen while the package rows were written.
	Epoch int64
}

type PackageGetParams struct{ Digest string }

type PackageFileListParams struct{ Digest string }

type PackageListParams struct {
	After string
	Limit int
}

type PackageReferencedParams struct{ Digests []string }

type PackageDeleteParams struct{ Digest string }

type BlobReferencedParams struct{ Digests []string }

type BlobGuardParams struct{ Exclusive bool }
