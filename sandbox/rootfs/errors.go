package rootfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/skilld/skilld"
)

// invalidf is the archive's fault: EINVALID, shown to the operator.
func invalidf(format string, args ...any) error {
	return skilld.Errorf(skilld.EINVALID, format, args...)
}

// tooLargef is an image over one of the Limits: ETOOLARGE.
func tooLargef(format string, args ...any) error {
	return skilld.Errorf(skilld.ETOOLARGE, format, args...)
}

// unavailablef is the host's fault (the store's disk, a cancelled call):
// EUNAVAILABLE, worth trying again once fixed.
func unavailablef(format string, args ...any) error {
	return skilld.Errorf(skilld.EUNAVAILABLE, format, args...)
}

// wrap prefixes err's message with context and keeps its code, so that what
// the operator reads says where the problem is (which archive, which layer)
// while callers still branch on the code. A context error becomes
// EUNAVAILABLE, as elsewhere in skilld; errors.Is still finds it.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	code := skilld.ErrorCode(err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		code = skilld.EUNAVAILABLE
	}
	return skilld.Errorf(code, "%s: %w", fmt.Sprintf(format, args...), err)
}

// entryError types a failed file operation on an entry of a layer. Most
// are the archive's doing (a name through a link leading out, a file where
// a folder must be, a hard link to a folder) and refuse the image as
// EINVALID; a host that cannot write (disk full, read-only, out of
// descriptors) is EUNAVAILABLE.
func entryError(name string, err error) error {
	if hostFault(err) {
		return unavailablef("writing %q: %w", name, err)
	}
	if strings.Contains(err.Error(), "path escapes from parent") {
		// os.Root's words (its error has no type of its own) for a name
		// resolved through a link that leads out of the tree.
		return invalidf("entry %q goes through a link that leads out of the root: %w", name, err)
	}
	return invalidf("entry %q: %w", name, err)
}

// hostFault reports whether err is the host's, not the archive's.
func hostFault(err error) bool {
	for _, errno := range []syscall.Errno{
		syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS,
		syscall.ENOMEM, syscall.EMFILE, syscall.ENFILE,
	} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// missing reports whether a file operation failed because its name is not
// there (or its folder is not a folder): a removal takes that as done.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
