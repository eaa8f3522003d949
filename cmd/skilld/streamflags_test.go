package main

import (
	"strings"
	"testing"
)

// TestDerivedLimits: the server-wide limits are half and a quarter of
// the descriptors left after the reserve, within their bounds.
func TestDerivedLimits(t *testing.T) {
	for _, c := range []struct {
		nofile            uint64
		tasks             int
		streams, sessions int
	}{
		{1024, 64, 64, 32},        // 1024 − 128 − 768 = 128
		{256, 4, 40, 20},          // 256 − 128 − 48 = 80
		{256, 64, 16, 16},         // nothing left: the floor
		{4096, 0, 1024, 992},      // workers run the tasks: 3968 left
		{1 << 20, 64, 1024, 1024}, // the ceiling
		{1 << 62, 64, 1024, 1024},
	} {
		s, m := derivedLimits(c.nofile, c.tasks)
		if s != c.streams || m != c.sessions {
			t.Errorf("derivedLimits(%d, %d) = %d, %d; want %d, %d", c.nofile, c.tasks, s, m, c.streams, c.sessions)
		}
	}
}

// TestStreamFlags: the limits come from flags or their variables, and
// nonsense is a usage error naming the flag.
func TestStreamFlags(t *testing.T) {
	t.Setenv("SKILLD_MAX_STREAMS_PER_TOKEN", "7")
	for args, want := range map[string]string{
		"--max-streams -1":               "--max-streams must not be negative",
		"--max-mcp-sessions -2":          "--max-mcp-sessions must not be negative",
		"--max-streams-per-token 0":      "--max-streams-per-token must be at least 1",
		"--max-mcp-sessions-per-token 0": "--max-mcp-sessions-per-token must be at least 1",
	} {
		code, _, errOut := runCLI(t, append([]string{"serve"}, strings.Fields(args)...)...)
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("serve %s: exit %d\n%s", args, code, errOut)
		}
	}
	var f streamFlags
	fs := newFlags(&env{}, "serve", "")
	f.register(fs)
	if err := fs.Parse([]string{"--max-mcp-sessions", "9"}); err != nil || f.check() != nil {
		t.Fatal(err, f.check())
	}
	if f.streamsPerToken != 7 || f.sessions != 9 || f.streams != 0 || f.sessionsPerToken != DefaultMCPSessionsPerToken {
		t.Errorf("flags %+v", f)
	}
	t.Setenv("SKILLD_MAX_STREAMS", "many")
	f = streamFlags{}
	f.register(newFlags(&env{}, "serve", ""))
	if err := f.check(); err == nil || !strings.Contains(err.Error(), "SKILLD_MAX_STREAMS") {
		t.Errorf("a bad variable: %v", err)
	}
}
