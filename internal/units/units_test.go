package units

import "testing"

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB",
		256 << 20: "256 MiB", 10 << 30: "10 GiB", 10<<30 + 200<<20: "10.2 GiB", 3 << 40: "3 TiB", -2048: "-2 KiB",
	} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
