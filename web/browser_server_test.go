package web_test

// The browser tests' server: a real `skilld serve` built from ./cmd/skilld
// on a fresh data folder, with the REST calls and archives the scenarios
// set up through.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld/internal/testbin"
)

// chromeAdminToken is the server's instance-admin token (SKILLD_BOOTSTRAP_TOKEN).
const chromeAdminToken = "skd_browsertest0123456789abcdefgh"

// chromeStepTimeout bounds one browser step, so that a page that never shows
// an element fails the test with a message instead of hanging it. No step
// is expected to come near it: it is a safety net, not a threshold.
const chromeStepTimeout = 60 * time.Second

// chromeServer is a running `skilld serve`.
type chromeServer struct {
	url string
	log *chromeLog
}

type chromeLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *chromeLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *chromeLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// requireChromeTool finds a program the browser tests need: without it they
// skip, except under CI=true, where they fail (scripts/test installs it).
func requireChromeTool(t *testing.T, what string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (none of %v on PATH; scripts/test installs it)", what, names)
	}
	t.Skipf("%s is not installed (none of %v on PATH); ./scripts/test installs it", what, names)
	return ""
}

// startChromeServer builds skilld and runs `skilld serve` on a fresh data
// folder and a free port, with the admin token, scripted models allowed
// and the extra flags args. It is stopped at the end of the test.
func startChromeServer(t *testing.T, args ...string) *chromeServer {
	t.Helper()
	bin := testbin.Skilld(t)
	data := t.TempDir()
	cmd := exec.Command(bin, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, args...)...)
	// The server's settings are its flags and these: none of the caller's
	// SKILLD_* variables (a database, an executor) leak in.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SKILLD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SKILLD_BOOTSTRAP_TOKEN="+chromeAdminToken, "SKILLD_ALLOW_SCRIPTED_MODELS=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &chromeServer{log: &chromeLog{}}
	listening := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		addr := regexp.MustCompile(`listening on (http://\S+)`)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(s.log, sc.Text())
			if m := addr.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case listening <- m[1]:
				default:
				}
			}
		}
		io.Copy(s.log, stderr)
	}()
	exited := make(chan error, 1)
	go func() { <-copied; exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("skilld serve log:\n%s", s.log.String())
		}
	})
	select {
	case s.url = <-listening:
	case err := <-exited:
		t.Fatalf("skilld serve exited before listening: %v\n%s", err, s.log.String())
	}
	return s
}

// api calls the REST API with a token; body is JSON (any value) or raw
// bytes sent as application/zip. It fails the test on a status other
// than want, and decodes the answer into out when given.
func (s *chromeServer) api(t *testing.T, token, method, path string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case []byte:
		rd, contentType = bytes.NewReader(b), "application/zip"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, got)
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, got)
		}
	}
}

// chromeZipSkill zips a skill folder as an archive of that one folder, as
// a user zips it.
func chromeZipSkill(t *testing.T, dir string) []byte {
	t.Helper()
	files := map[string]string{}
	root := filepath.Base(dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		files[root+"/"+filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return zipOf(t, files)
}

// chromeHostileSkill is a SKILL.md with an unknown frontmatter key (a warning
// when uploaded leniently) and a body that tries to run script in the
// page that renders it.
const chromeHostileSkill = `---
name: odd-skill
description: A skill whose SKILL.md tries to run script, with a binary file.
colour: blue
---
# Odd skill

<script>window.pwned = "script"</script>
<img src="x" onerror="window.pwned = 'onerror'">

[a link](javascript:window.pwned='link') and <b onmouseover="window.pwned='hover'">bold</b>.
`

// chromePNG is the start of a PNG file: not text, so the UI offers it as a
// download.
var chromePNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
