package exhaust_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/exhaust"
)

func TestUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		what string
		says string
	}{
		{&fs.PathError{Op: "write", Path: "/data/x", Err: syscall.ENOSPC}, exhaust.Disk, "the blob store: the disk is full"},
		{fmt.Errorf("saving: %w", &os.LinkError{Op: "rename", Err: syscall.EDQUOT}), exhaust.Disk, "disk is full"},
		{&os.SyscallError{Syscall: "socket", Err: syscall.EMFILE}, exhaust.Descriptors, "too many files open"},
		{&fs.PathError{Op: "open", Err: syscall.ENFILE}, exhaust.Descriptors, "too many files open"},
	} {
		if got := exhaust.Of(c.err); got != c.what {
			t.Errorf("Of(%v) = %q, want %q", c.err, got, c.what)
		}
		err := exhaust.Unavailable(c.err, "the blob store")
		if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(skilld.ErrorMessage(err), c.says) || !errors.Is(err, c.err) {
			t.Errorf("Unavailable(%v) = %v (%s)", c.err, err, skilld.ErrorCode(err))
		}
	}
	other := &fs.PathError{Op: "open", Err: syscall.ENOENT}
	if exhaust.Of(other) != "" || exhaust.Unavailable(other, "x") != error(other) || exhaust.Of(nil) != "" {
		t.Error("an error that is not exhaustion is left as it is")
	}
}
