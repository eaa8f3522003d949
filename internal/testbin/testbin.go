// Package testbin hands tests the skilld binary as a user gets it (built
// without -race, whatever the test binary was built with), for the tests
// that run it as a separate process: the CLI's exit codes, crashes and
// restarts, the walkthroughs, the browser tests.
package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Env names a skilld binary built from this tree, which Skilld hands out
// instead of building one. scripts/test builds it once for every
// package's tests: each build of its own was a link of the whole binary
// (10–20 s on two cores), several at once.
const Env = "SKILLD_TEST_BINARY"

// Skilld returns the path of a skilld binary, a file named "skilld" (so
// that its folder can go on a walkthrough's PATH): the one Env names, or
// one built now into a folder of t's.
func Skilld(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(Env); bin != "" {
		info, err := os.Stat(bin)
		switch {
		case err != nil:
			t.Fatalf("%s: %v", Env, err)
		case filepath.Base(bin) != "skilld" || !info.Mode().IsRegular() || info.Mode()&0o111 == 0:
			t.Fatalf("%s=%s is not an executable file named skilld", Env, bin)
		}
		return bin
	}
	bin := filepath.Join(t.TempDir(), "skilld")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/skilld/skilld/cmd/skilld").CombinedOutput(); err != nil {
		t.Fatalf("go build of skilld: %v\n%s", err, out)
	}
	return bin
}
