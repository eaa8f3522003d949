package bwrap_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// TestExecGrants: a command's own hosts (ExecParams.Allow) open the
// network through the proxy for that command only, in a sandbox made
// without it; its own variables (ExecParams.Env, a skill's secrets) reach
// its environment, win over the sandbox's, and never appear among the
// arguments of any process on the host.
func TestExecGrants(t *testing.T) {
	p, _ := bwraptest.New(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "granted") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "grants", Env: []string{"SKILL_TOKEN=from-the-agent"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Destroy(t.Context())

	const secret = "s3cret-value-9d41"
	env := []string{"SKILL_TOKEN=" + secret}
	res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: `test "$SKILL_TOKEN" = ` + secret + ` && echo token-ok; sleep 1`, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != "token-ok\n" {
		t.Errorf("the command's own variable: %q", res.Output)
	}
	// While a command holding the secret runs, no process of the host has
	// it among its arguments.
	done := make(chan struct{})
	go func() {
		defer close(done)
		sb.Exec(t.Context(), sandbox.ExecParams{Command: "sleep 2", Env: env})
	}()
	deadline := time.Now().Add(1500 * time.Millisecond)
	scans := 0
	for time.Now().Before(deadline) {
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range cmdlines {
			if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(secret)) {
				t.Fatalf("%s holds the secret: %q", f, b)
			}
		}
		scans++
		time.Sleep(50 * time.Millisecond)
	}
	<-done
	if scans == 0 {
		t.Fatal("no scan of the host's processes ran")
	}

	curl := "curl -s -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:" + port + "/ || true"
	res, err = sb.Exec(t.Context(), sandbox.ExecParams{Command: curl})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != "000\n" {
		t.Errorf("without the host granted: %q", res.Output)
	}
	res, err = sb.Exec(t.Context(), sandbox.ExecParams{Command: "curl -s http://127.0.0.1:" + port + "/", Allow: []string{"127.0.0.1:" + port}})
	if os.Geteuid() != 0 {
		// The proxy listens in each command's network, which takes root.
		if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "not root") {
			t.Errorf("a host granted on a server that is not root: %v", err)
		}
	} else if err != nil || string(res.Output) != "granted" || len(res.Egress) != 1 || !res.Egress[0].Allowed {
		t.Errorf("with the host granted: %v %q %+v", err, res.Output, res.Egress)
	}
	// The grant was the command's alone.
	if res, err = sb.Exec(t.Context(), sandbox.ExecParams{Command: curl}); err != nil || string(res.Output) != "000\n" {
		t.Errorf("after the granted command: %v %q", err, res.Output)
	}

	for _, bad := range []sandbox.ExecParams{
		{Command: "true", Env: []string{"LANG=../../tmp/x"}},
		{Command: "true", Env: []string{"LD_PRELOAD=/tmp/x.so"}},
		{Command: "true", Allow: []string{"https://example.com/"}},
	} {
		if _, err := sb.Exec(t.Context(), bad); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("Exec(%+v): %v", bad, err)
		}
	}
}
