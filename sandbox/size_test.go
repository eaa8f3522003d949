package sandbox_test

import (
	"testing"

	"github.com/skilld/skilld/sandbox"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"512": 512 << 20, "512MiB": 512 << 20, "2GiB": 2 << 30, "2G": 2 << 30, "2 gb": 2 << 30, "1.5GiB": 3 << 29, "64k": 64 << 10, "0": 0, "1TiB": 1 << 40} {
		if got, err := sandbox.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1.2.3", "5 PB", "GiB", "9999999999TiB", "1e3"} {
		if _, err := sandbox.ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) passed", bad)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512", "2GiB", "1.5 g", "", "-1", "1e9TiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := sandbox.ParseSize(s)
		if err == nil && n < 0 {
			t.Errorf("ParseSize(%q) = %d", s, n)
		}
	})
}
