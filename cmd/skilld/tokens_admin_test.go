package main

import (
	"strings"
	"testing"
)

// TestTokensCreateAdmin: an operator who lost the admin token mints a new
// instance-admin token from the data dir, while the server runs; the
// server takes it at once.
func TestTokensCreateAdmin(t *testing.T) {
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", "")
	t.Setenv("SKILLD_DB", "")
	data := t.TempDir()
	url, stderr, stop := startServe(t, "--data", data)
	defer stop()
	if !strings.Contains(stderr.String(), "save it") {
		t.Fatalf("no bootstrap: %s", stderr.String())
	}
	code, out, errOut := runCLI(t, "tokens", "create", "--admin", "--data", data)
	secret := strings.TrimSpace(out)
	if code != exitOK || !strings.HasPrefix(secret, "skd_") || !strings.Contains(errOut, "instance admin") || !strings.Contains(errOut, "not be shown again") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if code := status(t, url, secret); code != 200 {
		t.Errorf("the new admin token: %d", code)
	}
	code, out, errOut = runCLI(t, "tokens", "self", "--server", url, "--token", secret)
	if code != exitOK || !strings.Contains(out, "admin (instance admin)") || !strings.Contains(out, "recovered-admin") || !strings.Contains(out, "default") {
		t.Errorf("tokens self: exit %d\n%s%s", code, out, errOut)
	}

	// A name, another workspace, an expiry.
	if code, out, errOut := runCLI(t, "workspaces", "create", "team", "--server", url, "--token", secret); code != exitOK {
		t.Fatalf("workspaces create: %d %s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "tokens", "create", "--admin", "--data", data, "--workspace", "team", "--expires-in", "1h", "ops")
	teamSecret := strings.TrimSpace(out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, out, errOut = runCLI(t, "tokens", "list", "--server", url, "--token", teamSecret, "--workspace", "team")
	if code != exitOK || !strings.Contains(out, "ops") || !strings.Contains(out, "admin (instance admin)") {
		t.Errorf("tokens list in team: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "tokens", "create", "--admin", "--data", data, "--workspace", "nope"); code != exitFailure || !strings.Contains(errOut, `workspace "nope" not found`) {
		t.Errorf("an unknown workspace: exit %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "tokens", "create", "--admin", "--data", data, "--role", "viewer"); code != exitUsage || !strings.Contains(errOut, "--role") {
		t.Errorf("--admin with --role viewer: exit %d %s", code, errOut)
	}
}

// TestTokensCreateAdminRefusesMissingData: no data dir, or one without a
// database, is refused, naming --data, and nothing is created.
func TestTokensCreateAdminRefusesMissingData(t *testing.T) {
	t.Setenv("SKILLD_DB", "")
	dir := t.TempDir()
	for _, data := range []string{dir + "/nope", dir} {
		before := listTree(t, dir)
		code, out, errOut := runCLI(t, "tokens", "create", "--admin", "--data", data)
		if code != exitFailure || out != "" || !strings.Contains(errOut, "--data") {
			t.Errorf("--data %s: exit %d\nstdout: %s\nstderr: %s", data, code, out, errOut)
		}
		if after := listTree(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
			t.Errorf("files created: %q", after)
		}
	}
}
