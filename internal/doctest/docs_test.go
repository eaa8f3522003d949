package doctest_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skilld/skilld/internal/doctest"
	"github.com/skilld/skilld/internal/testbin"
)

// The documents whose walkthroughs run, each in a session of its own on a
// fresh data directory, in this order.
var walkthroughs = []string{"README.md", "docs/API.md", "docs/PACKAGE-FORMAT.md", "docs/RUNTIME.md", "docs/STORAGE.md", "docs/OPERATIONS.md", "docs/CLIENTS.md"}

// TestDocs runs every walkthrough as written: the README from building
// skilld to a finished task, through the CLI and curl, against a server
// the walkthrough itself starts.
func TestDocs(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"bash", "curl", "jq", "zip", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walkthroughs need %s (scripts/test installs it): %v", tool, err)
		}
	}
	bin := filepath.Dir(testbin.Skilld(t))
	goEnv := goEnvironment(t)
	for _, name := range walkthroughs {
		t.Run(name, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := doctest.Parse(doc)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			// The README's JSON is configuration to paste (MCP clients);
			// elsewhere it shows shapes, with … for the elided parts.
			if name == "README.md" {
				if err := doctest.CheckJSON(name, blocks); err != nil {
					t.Fatal(err)
				}
			}
			script := doctest.Script(name, blocks)
			if !strings.Contains(script, doctest.Marker) {
				return // nothing runnable; the JSON check was all
			}
			if strings.Contains(script, "127.0.0.1:8080") {
				needPort(t, "127.0.0.1:8080")
			}
			run(t, root, name, script, append(goEnv, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH")))
		})
	}
}

// run runs script in bash from the repository root with a home and a data
// directory of its own, then stops everything it started.
func run(t *testing.T, root, name, script string, env []string) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(tmp, "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	errs, err := os.Create(filepath.Join(tmp, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errs.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = root
	cmd.Env = append(env, "HOME="+home, "TMPDIR="+tmp, "SKILLD_DATA="+filepath.Join(tmp, "data"), "LANG=C.UTF-8")
	// Output goes to files, not pipes: a server the walkthrough starts in
	// the background keeps its descriptors open after bash exits.
	cmd.Stdout, cmd.Stderr = out, errs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	runErr := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // the servers it started
	}
	waitPortFree("127.0.0.1:8080")
	stdout, _ := os.ReadFile(out.Name())
	stderr, _ := os.ReadFile(errs.Name())
	if runErr != nil {
		t.Fatalf("%s: the walkthrough failed in the block at %s: %v\n--- stdout (last 4 KB):\n%s\n--- stderr (last 4 KB):\n%s",
			name, doctest.LastBlock(string(stderr)), runErr, tail(stdout, 4096), tail(stderr, 4096))
	}
	t.Logf("%s ran; stdout:\n%s", name, tail(stdout, 2048))
}

// goEnvironment keeps the Go caches where they are although HOME moves.
func goEnvironment(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME" || k == "TMPDIR" || k == "PATH" || strings.HasPrefix(k, "SKILLD_"):
			// the walkthrough sets its own
		default:
			env = append(env, kv)
		}
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		v, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, k+"="+strings.TrimSpace(string(v)))
	}
	return env
}

// needPort fails (under CI) or skips when addr is taken: the walkthroughs
// use the default address, as a newcomer does.
func needPort(t *testing.T, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		ln.Close()
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the walkthrough serves on %s, which is taken: %v", addr, err)
	}
	t.Skipf("the walkthrough serves on %s, which is taken here (%v); stop what listens there to run it", addr, err)
}

// waitPortFree waits a little for a stopped server to let go of addr.
func waitPortFree(addr string) {
	for range 50 {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
