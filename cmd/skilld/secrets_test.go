package main

import (
	"strings"
	"testing"
)

// TestHelpHidesSecrets: with a token and a database password in the
// environment, no command's help, usage error or flag error prints them.
func TestHelpHidesSecrets(t *testing.T) {
	const token, password = "skd_helptextsecret", "dbpassw0rd"
	t.Setenv("SKILLD_TOKEN", token)
	t.Setenv("SKILLD_DB", "postgres://skilld:"+password+"@127.0.0.1:1/skilld")
	seen := 0
	check := func(args ...string) string {
		_, out, errOut := runCLI(t, args...)
		all := out + errOut
		if strings.Contains(all, token) || strings.Contains(all, password) {
			t.Errorf("skilld %s printed a secret:\n%s", strings.Join(args, " "), all)
		}
		seen++
		return all
	}
	for _, c := range commands() {
		help := check(c.name, "-h")
		check(c.name, "--no-such-flag")
		for _, sub := range subcommands(help) {
			check(c.name, sub, "-h")
			check(c.name, sub, "--no-such-flag")
			check(c.name, sub, "--token")
		}
	}
	if seen < 50 {
		t.Fatalf("only %d command lines tried; the subcommand listing changed shape", seen)
	}
	if _, _, errOut := runCLI(t, "skills", "list", "-h"); !strings.Contains(errOut, "env SKILLD_TOKEN, set") {
		t.Errorf("help should say the token comes from the environment:\n%s", errOut)
	}
}

// subcommands reads the command names of a group's help.
func subcommands(help string) []string {
	_, list, ok := strings.Cut(help, "Commands:\n")
	if !ok {
		return nil
	}
	var names []string
	for line := range strings.Lines(list) {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		names = append(names, strings.Fields(line)[0])
	}
	return names
}
