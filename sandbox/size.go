package sandbox

import (
	"math"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
)

// sizeUnits are the units ParseSize takes, all binary (KB is KiB).
var sizeUnits = map[string]int64{
	"": 1 << 20, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// ParseSize reads a size as people write it: "512MiB", "2GiB", "1.5G" or
// a bare number of MiB ("512"), as --sandbox-memory takes. Units are
// binary whatever their spelling (KB, MB and GB are KiB, MiB and GiB).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mul, ok := sizeUnits[unit]
	n, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || n < 0 || math.IsInf(n, 0) || n*float64(mul) >= 1<<62 {
		return 0, skilld.Errorf(skilld.EINVALID, "size %q: give a number and a unit, such as 512MiB or 2GiB (a bare number is MiB)", s)
	}
	return int64(n * float64(mul)), nil
}
