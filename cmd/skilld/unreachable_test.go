package main

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/internal/testnet"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// TestUnreachableServerHint: a client command that cannot connect says
// where it tried and how to point it elsewhere, whether the address came
// from the flag or SKILLD_SERVER; an error the server answered gets no
// such hint.
func TestUnreachableServerHint(t *testing.T) {
	addr := testnet.RefusingAddr(t)
	for _, tc := range []struct {
		name string
		env  string
		args []string
	}{
		{"flag", "", []string{"skills", "list", "--token", "skd_x", "--server", "http://" + addr}},
		{"environment", "http://" + addr, []string{"skills", "list", "--token", "skd_x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SKILLD_SERVER", tc.env)
			code, _, stderr := runCLI(t, tc.args...)
			if code != exitFailure {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFailure, stderr)
			}
			for _, want := range []string{"cannot reach the server at http://" + addr, "connection refused", "skilld serve", "--server", "SKILLD_SERVER"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
	t.Run("answered", func(t *testing.T) {
		srv := newAPIServer(t, func(t *testing.T) store.Store { return storetest.OpenSQLite(t) })
		code, _, stderr := srv.cli(t, "skd_not_a_token", "default", "skills", "list")
		if code != exitFailure || strings.Contains(stderr, "SKILLD_SERVER") {
			t.Errorf("a refused token: exit %d, and the hint should not be there:\n%s", code, stderr)
		}
	})
}
