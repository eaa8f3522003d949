package sqldb

import (
	"strconv"
	"strings"
)

// nullString stores "" as NULL, for optional foreign keys.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func quote(s string) string { return strconv.Quote(s) }

// placeholders returns n comma-separated "?", for an IN list.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }
