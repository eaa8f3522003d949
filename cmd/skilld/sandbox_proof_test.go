package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
	"github.com/skilld/skilld/sandbox/sandboxtest"
)

// attackScript is a skill's script doing what a hostile skill would: each
// check prints ESCAPED when it got through and BLOCKED when it did not.
// Its arguments: the host's listener port, the server's bootstrap token,
// the data directory and the server's process ID.
const attackScript = `#!/bin/sh
port=$1 secret=$2 data=$3 server=$4
check() { if sh -c "$2" >/dev/null 2>&1; then echo "ESCAPED:$1"; else echo "BLOCKED:$1"; fi; }
check server-environment "grep -qs -- '$secret' /proc/*/environ /proc/\$PPID/environ"
check server-command-line "grep -qs -- 'test[.]paniconexit0' /proc/*/cmdline"
check data-dir "ls '$data'"
check database "test -e '$data/skilld.db' || test -e ../../../skilld.db"
check shadow "cat /etc/shadow"
check write-tmp "touch /tmp/../usr/pwned-$$ || touch /etc/pwned-$$"
check tcp-host "bash -c 'echo > /dev/tcp/127.0.0.1/$port'"
check signal-server "kill -0 $server"
check see-server "test -e /proc/$server"
dir=$(dirname "$0")
check skill-write "echo PAYLOAD > $dir/attack.sh"
check skill-chmod "chmod u+w $dir/attack.sh"
check skill-rename "mv $dir/attack.sh $dir/x.sh"
check skill-delete "rm $dir/attack.sh"
check skill-link "ln $dir/attack.sh ./link && echo PAYLOAD > ./link"
check skill-touch "touch -d 2000-01-01 $dir/attack.sh"
setsid sleep 4242.5 &
nohup sleep 4242.6 >/dev/null 2>&1 &
echo done
`

// sysScript makes one system call: "s:TEXT" is a string argument,
// "b:N" a zeroed buffer of N bytes, anything else a number. It exits 1
// when the call failed with EPERM, 0 when it succeeded, 2 otherwise.
const sysScript = `my $nr = shift;
my @a = map { /^s:(.*)$/ ? "$1" : /^b:(\d+)$/ ? "\0" x $1 : 0 + $_ } @ARGV;
$! = 0;
my $r = syscall($nr, @a);
exit($r != -1 ? 0 : $!{EPERM} ? 1 : 2);
`

// hardenScript is a skill's script trying what got through before
// commands ran unprivileged from their first instruction: preloading a
// library into something privileged, kernel keyrings, the kernel surfaces
// the filter closes, a root-owned file, and filling the disk. Its argument
// is the disk limit in KiB (0: none, and the disk is left alone).
func hardenScript() string {
	return fmt.Sprintf(`#!/bin/sh
quota=$1
dir=$(dirname "$0")
check() { if sh -c "$2" >/dev/null 2>&1; then echo "ESCAPED:$1"; else echo "BLOCKED:$1"; fi; }
denied() { name=$1; shift; perl "$dir/sys.pl" "$@" >/dev/null 2>&1; if [ $? = 1 ]; then echo "BLOCKED:$name"; else echo "ESCAPED:$name"; fi; }
cd /workspace
gcc -shared -fPIC -o /tmp/p.so "$dir/probe.c" && echo TMP:gcc
mktemp >/dev/null && touch /dev/shm/x && echo TMP:writable
LD_PRELOAD=/tmp/p.so /bin/true
echo /tmp/p.so > /etc/ld.so.preload 2>/dev/null && /bin/true
test -s preload.log && echo PRELOAD:ran
check preload-privileged "grep -qE '^(Uid|Gid):.*\<0\>|^Cap(Inh|Prm|Eff|Bnd|Amb):[[:space:]]*0*[1-9a-f]' preload.log"
check chown-root "cp /bin/true ./t && chown 0 ./t"
denied add_key %[1]d s:user s:skilld-proof s:planted 7 -4
denied keyctl %[2]d 0 -4 0
denied request_key %[3]d s:user s:skilld-proof 0 0
denied io_uring_setup %[4]d 1 b:120
denied perf_event_open %[5]d b:128 0 -1 -1 0
denied bpf %[6]d 0 b:128 128
denied userfaultfd %[7]d 0
denied unshare-newuser %[8]d %[9]d
denied mount %[10]d s:none s:/tmp s:tmpfs 0 0
if [ "$quota" -gt 0 ]; then
  df -k /workspace | awk 'NR == 2 { print "DF:" $2 }'
  head -c 3G /dev/zero > big 2>/tmp/err; if grep -q "No space left" /tmp/err; then echo BLOCKED:disk-bytes; else echo ESCAPED:disk-bytes; fi; rm -f big
  i=0; while [ $i -lt 1000000 ] && true > f$i 2>/dev/null; do i=$((i+1)); done
  if [ $i -lt 1000000 ]; then echo BLOCKED:disk-files; else echo ESCAPED:disk-files; fi; rm -f f*
fi
echo done
`, unix.SYS_ADD_KEY, unix.SYS_KEYCTL, unix.SYS_REQUEST_KEY, unix.SYS_IO_URING_SETUP, unix.SYS_PERF_EVENT_OPEN, unix.SYS_BPF,
		unix.SYS_USERFAULTFD, unix.SYS_UNSHARE, unix.CLONE_NEWUSER, unix.SYS_MOUNT)
}

// TestServeSandboxProof runs the attack as an operator would meet it: a
// skill published to the catalog and installed by a member of one
// workspace, whose task runs the script through the shell tool on
// `skilld serve`; then a fork bomb and a memory hog; then a task of
// another workspace using the same catalog item gets the original bytes.
func TestServeSandboxProof(t *testing.T) {
	bwraptest.Require(t)
	secret := "skd_proof" + strings.Repeat("x", 24)
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", secret)
	t.Setenv("SKILLD_ALLOW_SCRIPTED_MODELS", "1")
	t.Setenv("OPENAI_API_KEY", "sk-canary-not-for-tasks")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	connected := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			connected <- struct{}{}
		}
	}()
	// /proc/PID/environ shows a process's environment as it started: a
	// stand-in for a server started with the token in its environment.
	standIn := exec.Command("sleep", "300")
	standIn.Env = []string{"SKILLD_BOOTSTRAP_TOKEN=" + secret}
	if err := standIn.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		standIn.Process.Kill()
		standIn.Wait()
	}()
	data := t.TempDir()
	// As root each task's workspace is a file system of its own: 256 MiB
	// here. A server not running as root cannot limit it.
	quotaKiB := 0
	args := []string{"--data", data, "--sandbox-memory", "128", "--sandbox-processes", "32"}
	if os.Geteuid() == 0 {
		quotaKiB = 256 << 10
		args = append(args, "--sandbox-disk", "256MiB")
	}
	base, stderr, stop := startServe(t, args...)
	defer stop()
	if !strings.Contains(stderr.await(t, "skilld: sandbox "), "skilld: sandbox bwrap (isolated: true)") {
		t.Errorf("startup does not describe the sandbox:\n%s", stderr.String())
	}
	cli := func(token, ws string, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{args[0], args[1], "--server", base, "--token", token, "--workspace", ws}, args[2:]...)...)
		if code != exitOK {
			t.Fatalf("skilld %q: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	kit := filepath.Join(t.TempDir(), "attack-kit")
	writeFiles(t, kit, map[string]string{
		"SKILL.md":  "---\nname: attack-kit\ndescription: Runs checks on the sandbox.\n---\nRun attack.sh.\n",
		"attack.sh": attackScript,
		"harden.sh": hardenScript(),
		"sys.pl":    sysScript,
		"probe.c":   sandboxtest.ProbeLibrarySource(),
	})
	sum := sha256.Sum256([]byte(attackScript))
	original := hex.EncodeToString(sum[:])
	cli(secret, "default", "catalog", "create-registry", "acme", "--trust", "verified")
	cli(secret, "default", "catalog", "publish", "acme", kit)
	cli(secret, "default", "workspaces", "create", "team-b")
	member := func(ws string) string {
		out := cli(secret, ws, "tokens", "create", "m-"+ws, "--role", "member", "--json")
		var tok struct{ Token string }
		json.Unmarshal([]byte(out), &tok)
		if tok.Token == "" {
			t.Fatalf("no token in %s", out)
		}
		return tok.Token
	}
	mallory, bob := member("default"), member("team-b")

	// An agent whose commands would preload a library is refused, naming
	// the variable.
	status, msg := apiStatus(t, base, mallory, "default", "POST", "/agents",
		[]byte(`{"name": "preloader", "config": {"model": "scripted:x", "sandbox": {"env": {"LD_PRELOAD": "/workspace/p.so"}}}}`))
	if status != http.StatusUnprocessableEntity || !strings.Contains(msg, "LD_PRELOAD") {
		t.Errorf("saving an agent with LD_PRELOAD: %d %s", status, msg)
	}

	attack := fmt.Sprintf("sh skills/attack-kit-*/attack.sh %d %s %s %d", ln.Addr().(*net.TCPAddr).Port, secret, data, os.Getpid())
	script := writeModel(t, []string{
		`{"tool_calls": [{"name": "activate_skill", "arguments": {"skill_name": "attack-kit"}}]}`,
		shellStep(attack),
		shellStep("bomb() { bomb | bomb & }; bomb; sleep 5"),
		shellStep(`awk 'BEGIN { s = "x"; while (length(s) < 1024 * 1024 * 1024) s = s s; print "ALLOCATED" }'`),
		shellStep(fmt.Sprintf("sh skills/attack-kit-*/harden.sh %d", quotaKiB)),
		shellStep("echo the task goes on"),
		`{"text": "done"}`,
	})
	createAgent(t, base, mallory, "default", "attacker", script, "acme/attack-kit")
	results := runTask(t, base, mallory, "default", "attacker")
	if len(results) != 6 {
		t.Fatalf("%d tool results, want 6: %q", len(results), results)
	}
	out := results[1]
	if strings.Contains(out, "ESCAPED:") || strings.Count(out, "BLOCKED:") != 15 || !strings.Contains(out, "done") {
		t.Errorf("the attack script:\n%s", out)
	}
	// With cgroups (as root) a limit stops the whole command and says so;
	// without, each process meets its own limit (fork and malloc fail).
	cgroups := strings.Contains(stderr.String(), "processes: cgroup")
	if cgroups && !strings.Contains(results[2], "process limit of 32") || !cgroups && !strings.Contains(results[2], "Cannot fork") {
		t.Errorf("fork bomb: %s", results[2])
	}
	if cgroups && !strings.Contains(results[3], "memory limit of 128 MiB") || strings.Contains(results[3], "ALLOCATED") {
		t.Errorf("memory hog: %s", results[3])
	}
	hardened := results[4]
	blocked := 11
	if quotaKiB > 0 {
		blocked += 2
		m := regexp.MustCompile(`DF:(\d+)`).FindStringSubmatch(hardened)
		if n, err := strconv.Atoi(m[1%max(len(m), 1)]); m == nil || err != nil || n > quotaKiB {
			t.Errorf("df in the workspace does not show its own limit of %d KiB:\n%s", quotaKiB, hardened)
		}
	}
	for _, want := range []string{"TMP:gcc", "TMP:writable", "PRELOAD:ran", "done"} {
		if !strings.Contains(hardened, want) {
			t.Errorf("the hardening script lacks %s:\n%s", want, hardened)
		}
	}
	if strings.Contains(hardened, "ESCAPED:") || strings.Count(hardened, "BLOCKED:") != blocked {
		t.Errorf("the hardening script (%d BLOCKED wanted):\n%s", blocked, hardened)
	}
	if !strings.HasPrefix(results[5], "the task goes on") {
		t.Errorf("after the attacks: %s", results[5])
	}
	select {
	case <-connected:
		t.Error("a task connected to the host's 127.0.0.1")
	default:
	}
	if left := leftover("sleep 4242."); len(left) > 0 {
		t.Errorf("processes outlived the task's commands: %q", left)
	}
	// A task's status is final before its sandbox goes: give it a moment.
	var sandboxes []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if sandboxes, _ = bwraptest.Sandboxes(filepath.Join(data, "work", "sandboxes")); len(sandboxes) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(sandboxes) != 0 {
		t.Errorf("finished tasks left sandboxes: %v\n%s", sandboxes, stderr.String())
	}

	// Another workspace's task gets the skill's original bytes, and no
	// key the first one may have planted.
	check := writeModel(t, []string{
		`{"tool_calls": [{"name": "activate_skill", "arguments": {"skill_name": "attack-kit"}}]}`,
		shellStep("sha256sum skills/attack-kit-*/attack.sh; ls skills/attack-kit-*"),
		shellStep(fmt.Sprintf("perl skills/attack-kit-*/sys.pl %d s:user s:skilld-proof 0 0; echo request_key=$?", unix.SYS_REQUEST_KEY)),
		`{"text": "checked"}`,
	})
	createAgent(t, base, bob, "team-b", "checker", check, "acme/attack-kit")
	results = runTask(t, base, bob, "team-b", "checker")
	if len(results) != 3 || !strings.HasPrefix(results[1], original+"  ") || !strings.Contains(results[1], "SKILL.md\nattack.sh\nharden.sh\n") {
		t.Errorf("another workspace's task got %q, want sha256 %s", results, original)
	}
	if len(results) == 3 && !strings.HasPrefix(results[2], "request_key=1") {
		t.Errorf("another workspace's task looking for a key: %q", results[2])
	}
}

func shellStep(cmd string) string {
	b, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"name": "shell", "arguments": map[string]string{"command": cmd}}}})
	return string(b)
}

// writeModel writes a scripted model's steps to a file.
func writeModel(t *testing.T, steps []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(p, []byte("["+strings.Join(steps, ",\n")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runTask starts a task of an agent, waits for its end and returns the
// content of its tool results in order.
func runTask(t *testing.T, base, token, ws, agentName string) []string {
	t.Helper()
	task, events := runTaskEvents(t, base, token, ws, agentName)
	if st := task["status"]; st != "completed" {
		t.Fatalf("task %s: %v", st, task)
	}
	var results []string
	for _, e := range events {
		if e["type"] == "message" && e["role"] == "tool" {
			c, _ := e["content"].(string)
			results = append(results, c)
		}
	}
	return results
}

// runTaskEvents starts a task of an agent, waits for its end and returns
// the task and its log.
func runTaskEvents(t *testing.T, base, token, ws, agentName string) (map[string]any, []map[string]any) {
	t.Helper()
	do := func(method, path string, body []byte) map[string]any {
		return apiDo(t, base, token, ws, method, path, body)
	}
	task := do("POST", "/agents/"+agentName+"/tasks", []byte(`{"input": "go"}`))
	id, _ := task["id"].(string)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		task = do("GET", "/tasks/"+id, nil)
		if st := task["status"]; st == "completed" || st == "failed" || st == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task still %v", task["status"])
		}
	}
	var events []map[string]any
	for _, ev := range do("GET", "/tasks/"+id+"/events?format=json", nil)["items"].([]any) {
		events = append(events, ev.(map[string]any))
	}
	return task, events
}

// apiCall sends one request to a workspace's API, decodes the answer into
// out and returns the status.
func apiCall(t *testing.T, base, token, ws, method, path string, body []byte, out any) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, base+"/v1/workspaces/"+ws+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}

// apiDo is apiCall of an answer that must be a success.
func apiDo(t *testing.T, base, token, ws, method, path string, body []byte) map[string]any {
	t.Helper()
	var out map[string]any
	if code := apiCall(t, base, token, ws, method, path, body, &out); code >= 300 {
		t.Fatalf("%s %s: %d %v", method, path, code, out)
	}
	return out
}

// apiStatus is apiCall of an answer that may be an error: its status and
// message.
func apiStatus(t *testing.T, base, token, ws, method, path string, body []byte) (int, string) {
	t.Helper()
	var e struct {
		Error struct{ Message string }
	}
	code := apiCall(t, base, token, ws, method, path, body, &e)
	return code, e.Error.Message
}

// createAgent stores an agent with a scripted model using a catalog item.
func createAgent(t *testing.T, base, token, ws, name, script, item string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "config": map[string]any{"model": "scripted:" + script, "context": map[string]any{"window": 100000}},
		"skills": []any{map[string]string{"item": item}}})
	apiDo(t, base, token, ws, "POST", "/agents", body)
}

// leftover lists host processes whose command line holds s.
func leftover(s string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		if err == nil && strings.HasPrefix(cl, "sleep "+strings.TrimPrefix(s, "sleep ")) {
			out = append(out, filepath.Base(d)+": "+cl)
		}
	}
	return out
}

// Without bubblewrap the server still serves skills, says at start why
// tasks are off and how to fix it, and refuses tasks with that message
// without recording them; `skilld run` fails with it.
func TestWithoutBubblewrap(t *testing.T) {
	secret := "skd_nobwrap" + strings.Repeat("y", 24)
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", secret)
	t.Setenv("PATH", t.TempDir()) // no bwrap on it
	data := t.TempDir()
	base, stderr, stop := startServe(t, "--data", data)
	defer stop()
	if !strings.Contains(stderr.await(t, "tasks are disabled"), "tasks are disabled: skill scripts cannot run in a sandbox here: bubblewrap (bwrap) is not installed") ||
		!strings.Contains(stderr.String(), "apt-get install bubblewrap") || !strings.Contains(stderr.String(), "--sandbox unsafe-host") {
		t.Errorf("startup:\n%s", stderr.String())
	}
	body, _ := json.Marshal(map[string]any{"name": "a", "config": map[string]any{"model": "openai:gpt-4o-mini"}})
	apiDo(t, base, secret, "default", "POST", "/agents", body)
	req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/v1/workspaces/default/agents/a/tasks", strings.NewReader(`{"input":"x"}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(e.Error.Message, "bubblewrap") {
		t.Errorf("starting a task: %d %+v", resp.StatusCode, e)
	}
	if tasks := apiDo(t, base, secret, "default", "GET", "/tasks", nil); tasks["total"] != float64(0) {
		t.Errorf("a refused task was recorded: %v", tasks)
	}
	code, _, errOut := runCLI(t, "run", "--skills", examples, "--model", "scripted:../../examples/scripts/csv-demo.json",
		"--context-window", "128000", "--cache-dir", t.TempDir(), "x")
	if code != exitFailure || !strings.Contains(errOut, "bubblewrap (bwrap) is not installed") {
		t.Errorf("skilld run: exit %d, %s", code, errOut)
	}
}

// TestServeSandboxProofAsNonRoot runs the attack again on a server that is
// not root: commands in a user namespace of the server's uid, no cgroups,
// no mounts and so no disk limit.
func TestServeSandboxProofAsNonRoot(t *testing.T) {
	bwraptest.RerunAsNonRoot(t, "^TestServeSandboxProof$")
}
