package skillmd

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/skilld/skilld"
)

// MaxFileSize is the largest skill file ParseFile reads: the per-file limit
// of an uploaded package (pack.ArchiveMaxFileSize), so that a file skilld
// would refuse in a package is refused alone too, and a path naming an
// endless device stops.
const MaxFileSize = 10 << 20

// ParseFile is Parse of the skill file at path. When opts.Dir is empty the
// skill's name must match the name of the folder that holds the file, as
// CheckDir requires (unless path is a bare file name: then nothing is
// compared). Every error names the file: a *skilld.Error with code
// ENOTFOUND when it does not exist, ETOOLARGE when it is over MaxFileSize,
// and EINVALID when it cannot be read or is no valid skill file (then, as
// from Parse, errors.Is(err, ErrInvalid) holds and the details list every
// problem).
//
// The file is read with as few system calls as the system allows (on
// Unix: open, read to the end, close; no stat, and no offer to the
// runtime's poller, which os.Open makes and a regular file refuses), and
// its text is copied once: the skill's strings share that copy.
func ParseFile(path string, opts Options) (*Skill, []skilld.Detail, error) {
	text, err := readText(path)
	if err != nil {
		return nil, nil, err
	}
	if opts.Dir == "" {
		if dir := filepath.Base(filepath.Dir(path)); dir != "." && dir != ".." && dir != string(filepath.Separator) {
			opts.Dir = dir
		}
	}
	r := check(text, opts)
	if err := r.Err(); err != nil {
		var e *skilld.Error
		if errors.As(err, &e) {
			e.Message = path + ": " + e.Message
		}
		return nil, r.Warnings, err
	}
	return r.Skill, r.Warnings, nil
}

// readError is the typed error of a skill file that could not be read; the
// *fs.PathError it wraps names the file.
func readError(err *fs.PathError) error {
	if errors.Is(err, fs.ErrNotExist) {
		return skilld.Errorf(skilld.ENOTFOUND, "%w", err)
	}
	return skilld.Errorf(skilld.EINVALID, "%w", err)
}

func tooLarge(path string) error {
	return skilld.Errorf(skilld.ETOOLARGE, "%s is larger than %d bytes, the most a skill file may hold", path, MaxFileSize)
}
