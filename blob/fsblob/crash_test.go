package fsblob_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
)

// crashChildEnv makes the test binary act as the process TestCrashMidPut
// kills: it starts a Put into the store at the variable's value and hangs.
const crashChildEnv = "SKILLD_FSBLOB_CRASH_ROOT"

// crashPrefix is what the child writes before it hangs; its digest is the
// blob that must not exist after the crash.
var crashPrefix = strings.Repeat("partial skill package content\n", 64<<10) // ~1.9 MB

// TestCrashMidPut kills a real process in the middle of a Put and checks
// that the crash left no blob, only a temp file, and that the next New
// removes that temp file once it is old.
func TestCrashMidPut(t *testing.T) {
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+root)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // if the test fails before the kill below
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && line != "writing\n" {
			err = fmt.Errorf("child said %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("child did not start writing: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("child did not start writing within 30 s")
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v", err)
	}

	temps := tempFiles(t, root)
	if len(temps) != 1 {
		t.Fatalf("want exactly the crashed upload's temp file, found %v", temps)
	}
	s, err := fsblob.New(root) // fresh temp file: kept, it could be a live upload
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	partial := digestOf(crashPrefix)
	if _, err := s.Stat(ctx, partial); skilld.ErrorCode(err) != skilld.ENOTFOUND || !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat of the partial content's digest: %v, want ENOTFOUND", err)
	}
	for info, err := range s.List(ctx, "") {
		t.Fatalf("the crash left a blob: %+v %v", info, err)
	}
	var files []string
	filepath.WalkDir(filepath.Join(root, "sha256"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("files under sha256/ after the crash: %v", files)
	}

	old := time.Now().Add(-fsblob.StaleTempAge - time.Minute)
	tmp := filepath.Join(root, "tmp", temps[0])
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := fsblob.New(root); err != nil {
		t.Fatal(err)
	}
	if left := tempFiles(t, root); len(left) != 0 {
		t.Fatalf("New left the stale temp file: %v", left)
	}
}

// crashChild runs in the child process: Put from a reader that delivers
// crashPrefix, says so on stdout, then blocks until the parent kills it.
func crashChild(root string) {
	s, err := fsblob.New(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	r := io.MultiReader(strings.NewReader(crashPrefix), readerFunc(func([]byte) (int, error) {
		// Put writes each chunk before reading the next, so everything
		// above is in the temp file by now.
		fmt.Println("writing")
		time.Sleep(time.Hour) // not select{}: the runtime would call that a deadlock and exit
		return 0, io.EOF
	}))
	s.Put(context.Background(), r)
	os.Exit(3) // unreachable unless Put returned early
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func digestOf(s string) string {
	sum := sha256Hex(s)
	return blob.FormatDigest(sum)
}
