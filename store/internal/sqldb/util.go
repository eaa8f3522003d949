package sqldb

import "strconv"

// nullString stores "" as NULL, for optional foreign keys.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func quote(s string) string { return strconv.Quote(s) }
