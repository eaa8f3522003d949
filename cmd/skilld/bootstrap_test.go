package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startServe runs "skilld serve" in-process on a free port and returns its
// URL, its stderr so far, and a stop function that waits for it to exit
// and returns its exit code.
func startServe(t *testing.T, args ...string) (string, *syncBuffer, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), &env{stdout: &stdout, stderr: &stderr})
	}()
	addr := regexp.MustCompile(`listening on (http://\S+)`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], &stderr, func() int { cancel(); return <-done }
		}
	}
	cancel()
	t.Fatalf("server did not start: %s", stderr.String())
	return "", nil, nil
}

func status(t *testing.T, url, token string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url+"/v1/workspaces/default/skills", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeBootstrap: the first start on an empty database prints a
// generated admin token once; later starts print nothing about tokens.
func TestServeBootstrap(t *testing.T) {
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", "")
	data := t.TempDir()
	url, stderr, stop := startServe(t, "--data", data)
	token := regexp.MustCompile(`skd_[a-z0-9]+`).FindString(stderr.String())
	if token == "" || !strings.Contains(stderr.String(), "save it: it will not be shown again") {
		t.Fatalf("first start did not print a token: %s", stderr.String())
	}
	if code := status(t, url, token); code != 200 {
		t.Errorf("the printed token: %d", code)
	}
	stop()
	url, stderr, stop = startServe(t, "--data", data)
	defer stop()
	if strings.Contains(stderr.String(), "skd_") || strings.Contains(stderr.String(), "token") {
		t.Errorf("a later start printed token text: %s", stderr.String())
	}
	if code := status(t, url, token); code != 200 {
		t.Errorf("the token after a restart: %d", code)
	}
}

// TestServeBootstrapToken: SKILLD_BOOTSTRAP_TOKEN becomes the admin token
// and is never printed.
func TestServeBootstrapToken(t *testing.T) {
	const secret = "skd_fromtheenvironment0123456789"
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", secret)
	url, stderr, stop := startServe(t, "--data", t.TempDir())
	defer stop()
	if strings.Contains(stderr.String(), secret) || !strings.Contains(stderr.String(), "SKILLD_BOOTSTRAP_TOKEN") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if code := status(t, url, secret); code != 200 {
		t.Errorf("the bootstrap token: %d", code)
	}
	if code := status(t, url, "skd_wrongtoken0000000000000000000"); code != 401 {
		t.Errorf("another token: %d", code)
	}
}

// TestServeBadBootstrapToken: a malformed bootstrap token stops the start.
func TestServeBadBootstrapToken(t *testing.T) {
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", "short")
	code, _, errOut := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	if code != exitFailure || !strings.Contains(errOut, "bootstrap token must start with") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestServeBootstrapTokenIgnored: SKILLD_BOOTSTRAP_TOKEN on a data dir
// that already has its admin is ignored, and the start says so with a
// warning that names the way to mint another admin token; the ignored
// value is not a token. The variable still holding the token it made is
// not ignored (it is that token) and is not warned about.
func TestServeBootstrapTokenIgnored(t *testing.T) {
	const first = "skd_firstbootstraptoken0123456789"
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", first)
	data := t.TempDir()
	_, stderr, stop := startServe(t, "--data", data)
	if strings.Contains(stderr.String(), "level=WARN") {
		t.Errorf("the first start warned: %s", stderr.String())
	}
	stop()

	_, stderr, stop = startServe(t, "--data", data)
	if strings.Contains(stderr.String(), "level=WARN") {
		t.Errorf("a restart with the same token warned: %s", stderr.String())
	}
	stop()

	const other = "skd_anotherbootstraptoken98765432"
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", other)
	url, stderr, stop := startServe(t, "--data", data)
	defer stop()
	warn := regexp.MustCompile(`level=WARN msg="SKILLD_BOOTSTRAP_TOKEN is set but ignored[^\n]*bootstrap[^\n]*`).FindString(stderr.String())
	if warn == "" || !strings.Contains(warn, "skilld tokens create --admin --data "+data) || strings.Contains(stderr.String(), other) {
		t.Errorf("no warning naming tokens create --admin, or the value shown: %s", stderr.String())
	}
	if code := status(t, url, other); code != 401 {
		t.Errorf("the ignored token: %d", code)
	}
	if code := status(t, url, first); code != 200 {
		t.Errorf("the admin token: %d", code)
	}
}
