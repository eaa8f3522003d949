// Package temporaltest gives tests a real Temporal server: a dev server
// started from the Temporal CLI that SKILLD_TEST_TEMPORAL_CLI names
// (./scripts/test installs it), or one on PATH or in GOPATH/bin. Without a
// CLI, tests skip with the reason, except under CI=true, where that is a
// failure so that CI can never pass by skipping.
//
// Use it from TestMain: temporaltest.Main(m, &srv).
package temporaltest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
)

// Server is a Temporal dev server for tests.
type Server struct {
	// HostPort is the frontend's address.
	HostPort    string
	dev         *testsuite.DevServer
	unavailable error
}

// Main starts a server into *srv, runs the tests, stops it and exits.
func Main(m *testing.M, srv **Server) {
	*srv = Start()
	code := m.Run()
	(*srv).Stop()
	os.Exit(code)
}

// Start starts a dev server (namespace "default"), or records why not.
func Start() *Server {
	bin := CLI()
	if bin == "" {
		return &Server{unavailable: fmt.Errorf("no Temporal CLI: set SKILLD_TEST_TEMPORAL_CLI (./scripts/test installs it with go install github.com/temporalio/cli/cmd/temporal@v1.5.1)")}
	}
	dev, err := testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{
		ExistingPath:  bin,
		ClientOptions: &client.Options{Namespace: "default", Logger: Quiet{}},
		LogLevel:      "error",
		Stdout:        os.Stderr,
		Stderr:        os.Stderr,
	})
	if err != nil {
		return &Server{unavailable: fmt.Errorf("starting the Temporal dev server from %s: %w", bin, err)}
	}
	return &Server{HostPort: dev.FrontendHostPort(), dev: dev}
}

// CLI finds the Temporal CLI; "" when there is none.
func CLI() string {
	if bin := os.Getenv("SKILLD_TEST_TEMPORAL_CLI"); bin != "" {
		return bin
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "temporal")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Stop stops the server.
func (s *Server) Stop() {
	if s.dev != nil {
		s.dev.Stop()
	}
}

// Client returns a client of the server (closed at the end of the test),
// or ends the test: a skip, or a failure when CI=true.
func (s *Server) Client(t testing.TB) client.Client {
	t.Helper()
	s.Require(t)
	c, err := client.Dial(client.Options{HostPort: s.HostPort, Namespace: "default", Logger: Quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Require ends the test when there is no server.
func (s *Server) Require(t testing.TB) {
	t.Helper()
	if s.unavailable == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("Temporal: %v (CI requires it)", s.unavailable)
	}
	t.Skipf("Temporal: %v", s.unavailable)
}

// Quiet is an SDK logger that drops info and debug lines.
type Quiet struct{}

func (Quiet) Debug(string, ...any) {}
func (Quiet) Info(string, ...any)  {}
func (Quiet) Warn(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"temporal warn:", msg}, kv...)...)
}
func (Quiet) Error(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"temporal error:", msg}, kv...)...)
}
