package pgstore

import "testing"

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                      "SELECT 1",
		"a = ? AND b = ?":               "a = $1 AND b = $2",
		`x LIKE ? ESCAPE '\' AND y = ?`: `x LIKE $1 ESCAPE '\' AND y = $2`,
		"s = 'what?' AND t = ?":         "s = 'what?' AND t = $1",
		"VALUES (?, ?), (?, ?), (?, ?), (?, ?), (?, ?)?": "VALUES ($1, $2), ($3, $4), ($5, $6), ($7, $8), ($9, $10)$11",
	} {
		if got := rebind(in); got != want {
			t.Errorf("rebind(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	got := redact("cannot parse postgres://u:s3cret@h/db", "postgres://u:s3cret@h/db")
	if got != "cannot parse postgres://u:xxxxx@h/db" {
		t.Errorf("redact = %q", got)
	}
}
