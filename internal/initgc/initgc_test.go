package initgc

import (
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

// TestRestore: the collector is off from this package's init until
// Restore, which puts back the GOGC of the environment.
func TestRestore(t *testing.T) {
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("before Restore the GC percent is %d, want -1 (off)", got)
	}
	Restore()
	want := 100
	if v := os.Getenv("GOGC"); v == "off" {
		want = -1
	} else if n, err := strconv.Atoi(v); err == nil {
		want = n
	}
	if got := debug.SetGCPercent(want); got != want {
		t.Fatalf("after Restore the GC percent is %d, want %d (GOGC=%q)", got, want, os.Getenv("GOGC"))
	}
}
