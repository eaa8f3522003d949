package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeHealthyWhileSandboxChecks: serve answers /healthz and serves
// skills while its sandbox check is still running (here a bwrap that
// does not answer until the test lets it fail); a task asked for in the
// meantime waits for the check's outcome and is refused with it, and is
// not recorded.
func TestServeHealthyWhileSandboxChecks(t *testing.T) {
	secret := "skd_pending" + strings.Repeat("p", 24)
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", secret)
	// The probe runs bwrap as a user of the sandbox's: the folder must be
	// open to it, which a test's temporary folder is not.
	bin, err := os.MkdirTemp("", "skilld-bwrap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	release := filepath.Join(bin, "release")
	script := "#!/bin/sh\nwhile [ ! -e " + release + " ]; do sleep 0.02; done\necho 'bwrap: stand-in refuses' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	data := t.TempDir()
	base, stderr, stop := startServe(t, "--data", data, "--sandbox-disk", "off")
	defer stop()
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz while the sandbox is checked: %d", resp.StatusCode)
	}
	if s := stderr.String(); strings.Contains(s, "tasks are disabled") || strings.Contains(s, "skilld: sandbox ") {
		t.Fatalf("the check ended before the stand-in was let go:\n%s", s)
	}
	apiDo(t, base, secret, "default", "GET", "/skills", nil)
	body, _ := json.Marshal(map[string]any{"name": "a", "config": map[string]any{"model": "openai:gpt-4o-mini"}})
	apiDo(t, base, secret, "default", "POST", "/agents", body)

	refused := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/v1/workspaces/default/agents/a/tasks", strings.NewReader(`{"input":"x"}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			refused <- 0
			return
		}
		resp.Body.Close()
		refused <- resp.StatusCode
	}()
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := <-refused; code != http.StatusServiceUnavailable {
		t.Errorf("a task asked for during the check: %d, want 503", code)
	}
	stderr.await(t, "tasks are disabled")
	if tasks := apiDo(t, base, secret, "default", "GET", "/tasks", nil); tasks["total"] != float64(0) {
		t.Errorf("a refused task was recorded: %v", tasks)
	}
}
