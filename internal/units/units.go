// Package units writes quantities for people to read.
package units

import (
	"fmt"
	"strconv"
)

// Bytes names a number of bytes roughly, in binary units: "512 MiB" for a
// whole number of them, "1.5 GiB" otherwise.
func Bytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size || -n >= u.size {
			if n%u.size == 0 {
				return strconv.FormatInt(n/u.size, 10) + " " + u.name
			}
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.size), u.name)
		}
	}
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Window writes a window size the way models are described: 128k, 1M.
func Window(tokens int) string {
	if tokens >= 1_000_000 && tokens%1_000_000 == 0 {
		return fmt.Sprintf("%dM", tokens/1_000_000)
	}
	return fmt.Sprintf("%dk", tokens/1000)
}
