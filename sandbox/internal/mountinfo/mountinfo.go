// Package mountinfo reads this process's mount table, /proc/self/mountinfo.
package mountinfo

import (
	"os"
	"strconv"
	"strings"
)

// Mount is one line of the table.
type Mount struct {
	// Root is the folder of the file system mounted here; Point is where.
	Root, Point string
	// FSType is the file system's type; Super its options ("rw,memory"
	// for a cgroup v1 hierarchy).
	FSType, Super string
}

// Read returns the table.
func Read() ([]Mount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return Parse(b), nil
}

// Parse reads a table in the mountinfo format; lines it cannot read are
// passed over.
func Parse(b []byte) []Mount {
	var out []Mount
	for line := range strings.SplitSeq(string(b), "\n") {
		// id parent major:minor root point options [optional…] - type source super
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 {
			continue
		}
		out = append(out, Mount{Root: unescape(fields[3]), Point: unescape(fields[4]), FSType: tail[0], Super: tail[2]})
	}
	return out
}

// unescape undoes the table's octal escapes of spaces and the like.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
