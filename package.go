package skilld

import "time"

// PackageInfo describes a stored package: an immutable set of files
// addressed by the digest of its manifest (docs/PACKAGE-FORMAT.md).
type PackageInfo struct {
	Digest    string    `json:"digest"`
	Size      int64     `json:"size"`
	FileCount int       `json:"file_count"`
	CreatedAt time.Time `json:"created_at"`
}

// PackageFile is one file of a stored package. Its bytes are the blob with
// the file's own digest, shared by every package holding the same bytes.
type PackageFile struct {
	Path   string `json:"path"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
	Exec   bool   `json:"exec,omitempty"`
}
