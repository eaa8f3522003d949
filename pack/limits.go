package pack

// The numbers behind every limit. They are named so that docs, error messages
// and tests can quote the same source instead of repeating literals.
const (
	// Inline packages arrive as JSON in one API request.
	InlineMaxFiles     = 200
	InlineMaxTotalSize = 5 << 20
	// InlineMaxFileSize equals the total: one big file is as fine as many
	// small ones as long as the request stays bounded.
	InlineMaxFileSize = InlineMaxTotalSize
	InlineMaxDepth    = 10

	// Archive packages are uploaded zip, tar or tar.gz files.
	ArchiveMaxFiles     = 1000
	ArchiveMaxFileSize  = 10 << 20
	ArchiveMaxTotalSize = 50 << 20

	// GitHub imports: the per-package caps apply to each skill found in a
	// repository; GitHubMaxArchiveSize caps the downloaded repository archive.
	GitHubMaxFiles       = 200
	GitHubMaxPackageSize = 10 << 20
	GitHubMaxArchiveSize = 25 << 20

	// MaxDepth is the folder depth cap for archives, GitHub and directories;
	// inline packages use the tighter InlineMaxDepth.
	MaxDepth = 32
	// MaxPathLen caps a path in bytes; CheckPath enforces it for every
	// package, Limits.MaxPathLen can only lower it.
	MaxPathLen = 1024
	// MaxCompressionRatio is the largest uncompressed:compressed ratio
	// accepted. Ordinary text and code stay far below it; bombs go far above.
	MaxCompressionRatio = 100
	// RatioCheckMinSize is the expanded size below which the ratio is not
	// checked: a short run of spaces or zeros legitimately deflates more than
	// 100:1 (2 KiB of spaces is about 15 bytes compressed), and below this
	// size a high ratio cannot hurt anyway.
	RatioCheckMinSize = 1 << 20
)

// Limits bounds a package. A zero field means "no limit" for that field;
// MaxPathLen can only tighten the MaxPathLen that CheckPath always applies.
//
// Depth counts path segments: "SKILL.md" has depth 1, "scripts/run.sh" depth 2.
type Limits struct {
	MaxFiles     int
	MaxFileSize  int64
	MaxTotalSize int64
	MaxDepth     int
	MaxPathLen   int
	// MaxRatio is only used by readers of compressed data (zip entries,
	// gzip streams); New has nothing to compare it against.
	MaxRatio int64
}

// InlineLimits are the limits for a package sent inline in an API request.
func InlineLimits() Limits {
	return Limits{
		MaxFiles:     InlineMaxFiles,
		MaxFileSize:  InlineMaxFileSize,
		MaxTotalSize: InlineMaxTotalSize,
		MaxDepth:     InlineMaxDepth,
		MaxPathLen:   MaxPathLen,
		MaxRatio:     MaxCompressionRatio,
	}
}

// ArchiveLimits are the limits for an uploaded archive and for a directory
// read from disk.
func ArchiveLimits() Limits {
	return Limits{
		MaxFiles:     ArchiveMaxFiles,
		MaxFileSize:  ArchiveMaxFileSize,
		MaxTotalSize: ArchiveMaxTotalSize,
		MaxDepth:     MaxDepth,
		MaxPathLen:   MaxPathLen,
		MaxRatio:     MaxCompressionRatio,
	}
}

// GitHubLimits are the limits for one skill package imported from a GitHub
// repository. There is no separate per-file cap: a single file may use the
// whole package allowance.
func GitHubLimits() Limits {
	return Limits{
		MaxFiles:     GitHubMaxFiles,
		MaxFileSize:  GitHubMaxPackageSize,
		MaxTotalSize: GitHubMaxPackageSize,
		MaxDepth:     MaxDepth,
		MaxPathLen:   MaxPathLen,
		MaxRatio:     MaxCompressionRatio,
	}
}

// budget is what readers check before reading an entry's data: the file
// count and the declared size, so an archive is refused before memory is
// spent on it. Readers then hold each entry to its declared size while
// reading, and New checks every limit again on the finished file list.
type budget struct {
	lim   Limits
	files int
	total int64
}

// admit reserves room for one more file of the declared size, or explains
// why there is none.
func (b *budget) admit(path string, size int64) error {
	if b.lim.MaxFiles > 0 && b.files >= b.lim.MaxFiles {
		return errTooManyFiles(b.lim.MaxFiles)
	}
	if b.lim.MaxFileSize > 0 && size > b.lim.MaxFileSize {
		return errFileTooLarge(path, size, b.lim.MaxFileSize)
	}
	if b.lim.MaxTotalSize > 0 && size > b.lim.MaxTotalSize-b.total {
		return errTooLarge(b.lim.MaxTotalSize)
	}
	b.files++
	b.total += size
	return nil
}
