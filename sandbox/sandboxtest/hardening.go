package sandboxtest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
)

// The hardening proofs: nothing a command runs holds privilege, whatever
// it preloads; nothing it leaves behind works with privilege on the host;
// the kernel surfaces a script never needs are closed; one sandbox cannot
// reach another through the kernel (keyrings, uids) or fill the server's
// disk; and ordinary work still runs.

// requireTool skips a proof that needs a program the sandbox's system
// folders do not have, except under CI=true, where the machine is expected
// to have it (scripts/test installs what is missing).
func requireTool(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		found := false
		for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
			if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.Mode()&0o111 != 0 {
				found = true
			}
		}
		if !found {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed on this machine", name)
			}
			t.Skipf("%s is not installed on this machine", name)
		}
	}
}

// probeLibrary is a shared library whose constructor records, in
// /workspace/preload.log, the identity and capabilities of every process
// it is loaded into.
const probeLibrary = `#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void probe(void) {
	char line[512], exe[256] = "?";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) exe[n] = 0;
	FILE *in = fopen("/proc/self/status", "r");
	FILE *out = fopen("/workspace/preload.log", "a");
	if (!in || !out) return;
	fprintf(out, "BEGIN %d %s\n", (int)getpid(), exe);
	while (fgets(line, sizeof line, in))
		if (!strncmp(line, "Uid:", 4) || !strncmp(line, "Gid:", 4) || !strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs:", 11))
			fputs(line, out);
	fputs("END\n", out);
	fclose(in);
	fclose(out);
}
`

// CheckPreloadLog checks what probeLibrary recorded: at least one process,
// and every one unprivileged (no uid or gid 0, every capability set empty,
// no_new_privs set). It returns the programs the library was loaded into.
func CheckPreloadLog(t testing.TB, log string) []string {
	t.Helper()
	var exes []string
	for block := range strings.SplitSeq(log, "BEGIN ") {
		if strings.TrimSpace(block) == "" {
			continue
		}
		head, body, _ := strings.Cut(block, "\n")
		exes = append(exes, head)
		fields := map[string]string{}
		for line := range strings.SplitSeq(body, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				fields[k] = strings.TrimSpace(v)
			}
		}
		for _, k := range []string{"Uid", "Gid"} {
			for id := range strings.FieldsSeq(fields[k]) {
				if id == "0" {
					t.Errorf("a preloaded library ran with %s 0 in %s:\n%s", k, head, body)
				}
			}
		}
		for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
			if fields[k] != "0000000000000000" {
				t.Errorf("a preloaded library ran with %s %q in %s", k, fields[k], head)
			}
		}
		if fields["NoNewPrivs"] != "1" {
			t.Errorf("a preloaded library ran without no_new_privs in %s", head)
		}
	}
	if len(exes) == 0 {
		t.Errorf("the preloaded library never ran; log %q", log)
	}
	return exes
}

// ProbeLibrarySource is probeLibrary, for tests outside this package that
// plant it themselves.
func ProbeLibrarySource() string { return probeLibrary }

// preloadUnprivileged: a library a task wrote, preloaded by the script's
// own LD_PRELOAD or through /etc/ld.so.preload in the sandbox, only ever
// runs as the unprivileged user with no capabilities.
func (s *suite) preloadUnprivileged(t *testing.T) {
	requireTool(t, "gcc")
	sb := s.create(t, sandbox.CreateParams{})
	if err := sb.WriteFile(t.Context(), "p.c", []byte(probeLibrary)); err != nil {
		t.Fatal(err)
	}
	res := mustExec(t, sb, `gcc -shared -fPIC -o p.so p.c || exit 9
LD_PRELOAD=/workspace/p.so /bin/true
LD_PRELOAD=/workspace/p.so sh -c 'cat /proc/self/status >/dev/null'
echo /workspace/p.so > /etc/ld.so.preload 2>/dev/null && /bin/true
echo done`, sandbox.Limits{Timeout: 2 * time.Minute})
	if res.ExitCode != 0 || !strings.Contains(string(res.Output), "done") {
		t.Fatalf("building and preloading the library: %s\n%s", res.Summary(), res.Output)
	}
	log, err := sb.ReadFile(t.Context(), "preload.log", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	CheckPreloadLog(t, string(log))
}

// loaderVariables refuses, for every provider, the variables that change
// how programs load or start.
func (s *suite) loaderVariables(t *testing.T) {
	for _, kv := range []string{"LD_PRELOAD=/workspace/p.so", "LD_LIBRARY_PATH=/workspace", "LD_AUDIT=x.so", "GCONV_PATH=/workspace", "GLIBC_TUNABLES=glibc.malloc.check=3",
		"MALLOC_CHECK_=3", "NLSPATH=/workspace/%N", "HOSTALIASES=/workspace/h", "LOCALDOMAIN=x", "RES_OPTIONS=debug", "GETCONF_DIR=/workspace", "TMPDIR=/etc", "BASH_ENV=/workspace/x"} {
		_, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: "t-" + random(), Env: []string{"OK=1", kv}})
		wantCode(t, err, skilld.EINVALID)
		name, _, _ := strings.Cut(kv, "=")
		if err != nil && !strings.Contains(err.Error(), name) {
			t.Errorf("refusing %s: %v does not name it", kv, err)
		}
	}
	sb := s.create(t, sandbox.CreateParams{Env: []string{"TMPDIR=/tmp/mine", "LDFLAGS=-L/x", "MALLOC=fine"}})
	if res := mustExec(t, sb, `echo "$TMPDIR $LDFLAGS $MALLOC"`, sandbox.Limits{}); string(res.Output) != "/tmp/mine -L/x fine\n" {
		t.Errorf("ordinary variables: %q", res.Output)
	}
}

// noPrivilegedFiles: whatever a command does with modes and owners, no
// file in its folder belongs to root and no set-uid or set-gid bit works
// on the host, and no device can be made.
func (s *suite) noPrivilegedFiles(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	mustExec(t, sb, `cp /usr/bin/id ./suid-id && chmod 6755 ./suid-id; chown 0:0 ./suid-id 2>/dev/null
mkdir sgid-dir && chmod 2777 sgid-dir; chown 0 sgid-dir 2>/dev/null
mknod dev-null c 1 3 2>/dev/null; mkfifo fifo
ls -ln`, sandbox.Limits{})
	host := sb.HostPath()
	if host == "" {
		t.Skip("the provider has no host folder")
	}
	err := filepath.Walk(host, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(host, p)
		if st.Uid == 0 || st.Gid == 0 {
			t.Errorf("%s belongs to root (%d:%d)", rel, st.Uid, st.Gid)
		}
		if info.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0 {
			t.Errorf("%s is a device", rel)
		}
		if info.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 && info.Mode().IsRegular() {
			s.setuidInert(t, p, st)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setuidInert checks that a set-uid file a command left gives nothing when
// run on the host: as root, it is run as another user, whose effective ids
// must not change; otherwise its file system must be mounted nosuid or the
// file belong to the server's own user (which can run it anyway).
func (s *suite) setuidInert(t *testing.T, p string, st *syscall.Stat_t) {
	if os.Geteuid() != 0 {
		var fs unix.Statfs_t
		if err := unix.Statfs(p, &fs); err != nil {
			t.Fatal(err)
		}
		if fs.Flags&unix.ST_NOSUID == 0 && int(st.Uid) != os.Geteuid() {
			t.Errorf("%s is set-uid %d on a file system that honours it", p, st.Uid)
		}
		return
	}
	// The file may be in folders the other user cannot enter: run a
	// copy of the path's access, not of the file, by opening it here.
	const nobody = 65533
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("/proc/self/fd/3", "-u")
	cmd.ExtraFiles = []*os.File{f}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running %s as uid %d: %v %s", p, nobody, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(nobody) {
		t.Errorf("%s (set-uid %d) ran with effective uid %s for uid %d", p, st.Uid, got, nobody)
	}
}

// keyringsClosed: no command can add, find or read a kernel key, so no
// key (and no key quota) is shared between sandboxes, of one workspace or
// of two.
func (s *suite) keyringsClosed(t *testing.T) {
	requireTool(t, "perl")
	a := s.create(t, sandbox.CreateParams{})
	b := s.create(t, sandbox.CreateParams{})
	// perl passes strings as pointers to writable buffers: arguments go
	// through variables, never literals.
	add := fmt.Sprintf(`perl -e 'my @a = ("user", "skilld-probe", "planted", 7, -4); $!=0; $r = syscall(%d, @a); print "add_key ", ($r == -1 ? $!+0 : "ok"), "\n"'`, unix.SYS_ADD_KEY)
	find := fmt.Sprintf(`perl -e 'my @a = ("user", "skilld-probe", 0, 0); $!=0; $r = syscall(%d, @a); print "request_key ", ($r == -1 ? $!+0 : "ok"), "\n"; @a = (0, -4, 0); $!=0; $r = syscall(%d, @a); print "keyctl ", ($r == -1 ? $!+0 : "ok"), "\n"'`, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL)
	var wg sync.WaitGroup
	var outA, outB []byte
	wg.Go(func() { outA = mustExec(t, a, add+"; "+find, sandbox.Limits{}).Output })
	wg.Go(func() { outB = mustExec(t, b, find, sandbox.Limits{}).Output })
	wg.Wait()
	want := map[string]bool{"add_key 1": true, "request_key 1": true, "keyctl 1": true}
	for _, out := range [][]byte{outA, outB, mustExec(t, s.create(t, sandbox.CreateParams{}), find, sandbox.Limits{}).Output} {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		for _, l := range lines {
			if !want[l] {
				t.Errorf("a keyring call was not refused with EPERM: %q", l)
			}
		}
		if len(lines) < 2 {
			t.Errorf("keyring probe: %q", out)
		}
	}
}

// deniedCalls are system calls that must fail with EPERM in every command,
// with arguments that would otherwise succeed or fail differently.
func deniedCalls() [][]string {
	buf := func(n int) string { return `"\0" x ` + strconv.Itoa(n) }
	return [][]string{
		{"add_key", strconv.Itoa(unix.SYS_ADD_KEY), `"user"`, `"k"`, `"v"`, "1", "-4"},
		{"keyctl", strconv.Itoa(unix.SYS_KEYCTL), "0", "-4", "0"},
		{"request_key", strconv.Itoa(unix.SYS_REQUEST_KEY), `"user"`, `"k"`, "0", "0"},
		{"io_uring_setup", strconv.Itoa(unix.SYS_IO_URING_SETUP), "1", buf(120)},
		{"io_uring_enter", strconv.Itoa(unix.SYS_IO_URING_ENTER), "0", "0", "0", "0", "0", "0"},
		{"io_uring_register", strconv.Itoa(unix.SYS_IO_URING_REGISTER), "0", "0", "0", "0"},
		{"perf_event_open", strconv.Itoa(unix.SYS_PERF_EVENT_OPEN), buf(128), "0", "-1", "-1", "0"},
		{"bpf", strconv.Itoa(unix.SYS_BPF), "0", buf(128), "128"},
		{"userfaultfd", strconv.Itoa(unix.SYS_USERFAULTFD), "0"},
		{"ptrace", strconv.Itoa(unix.SYS_PTRACE), "16", "1", "0", "0"},
		{"process_vm_readv", strconv.Itoa(unix.SYS_PROCESS_VM_READV), "1", "0", "0", "0", "0", "0"},
		{"mount", strconv.Itoa(unix.SYS_MOUNT), `"none"`, `"/tmp"`, `"tmpfs"`, "0", "0"},
		{"umount2", strconv.Itoa(unix.SYS_UMOUNT2), `"/tmp"`, "0"},
		{"pivot_root", strconv.Itoa(unix.SYS_PIVOT_ROOT), `"."`, `"."`},
		{"fsopen", strconv.Itoa(unix.SYS_FSOPEN), `"tmpfs"`, "0"},
		{"open_tree", strconv.Itoa(unix.SYS_OPEN_TREE), "-100", `"/"`, "0"},
		{"unshare-newuser", strconv.Itoa(unix.SYS_UNSHARE), strconv.Itoa(unix.CLONE_NEWUSER)},
		{"clone-newuser", strconv.Itoa(unix.SYS_CLONE), strconv.Itoa(unix.CLONE_NEWUSER | int(syscall.SIGCHLD)), "0", "0", "0", "0"},
		{"setns", strconv.Itoa(unix.SYS_SETNS), "0", "0"},
		{"kexec_load", strconv.Itoa(unix.SYS_KEXEC_LOAD), "0", "0", "0", "0"},
		{"kexec_file_load", strconv.Itoa(unix.SYS_KEXEC_FILE_LOAD), "-1", "-1", "0", `""`, "0"},
		{"init_module", strconv.Itoa(unix.SYS_INIT_MODULE), "0", "0", `""`},
		{"finit_module", strconv.Itoa(unix.SYS_FINIT_MODULE), "-1", `""`, "0"},
		{"delete_module", strconv.Itoa(unix.SYS_DELETE_MODULE), `"loop"`, "0"},
		{"reboot", strconv.Itoa(unix.SYS_REBOOT), "0", "0", "0", "0"},
		{"swapon", strconv.Itoa(unix.SYS_SWAPON), `"/workspace/x"`, "0"},
		{"swapoff", strconv.Itoa(unix.SYS_SWAPOFF), `"/workspace/x"`},
		{"acct", strconv.Itoa(unix.SYS_ACCT), "0"},
		{"quotactl", strconv.Itoa(unix.SYS_QUOTACTL), "0", `"/"`, "0", "0"},
		{"name_to_handle_at", strconv.Itoa(unix.SYS_NAME_TO_HANDLE_AT), "-100", `"/"`, buf(136), buf(8), "0"},
		{"open_by_handle_at", strconv.Itoa(unix.SYS_OPEN_BY_HANDLE_AT), "-100", buf(136), "0"},
	}
}

// kernelSurfacesClosed: each denied system call fails with EPERM (not a
// kill, so programs probing for features go on); clone3 fails with ENOSYS
// (so the C library falls back to clone, whose flags can be checked); and
// a 32-bit system call from a 64-bit program is refused.
func (s *suite) kernelSurfacesClosed(t *testing.T) {
	requireTool(t, "perl")
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("the probe's system call numbers are for amd64 and arm64, not %s", runtime.GOARCH)
	}
	var script strings.Builder
	script.WriteString("use POSIX ();\n")
	for _, c := range deniedCalls() {
		fmt.Fprintf(&script, "@a = (%s); $! = 0; $r = syscall(%s, @a); POSIX::_exit(0) if $r == 0 && %q =~ /^clone/; print %q, ' ', ($r == -1 ? $!+0 : \"ok:$r\"), \"\\n\";\n", strings.Join(c[2:], ", "), c[1], c[0], c[0])
	}
	fmt.Fprintf(&script, "@a = (%s, 88); $! = 0; $r = syscall(%d, @a); POSIX::_exit(0) if $r == 0; print 'clone3 ', ($r == -1 ? $!+0 : \"ok:$r\"), \"\\n\";\n", `"\0" x 88`, unix.SYS_CLONE3)
	sb := s.create(t, sandbox.CreateParams{})
	if err := sb.WriteFile(t.Context(), "probe.pl", []byte(script.String())); err != nil {
		t.Fatal(err)
	}
	res := mustExec(t, sb, "perl probe.pl", sandbox.Limits{})
	got := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(res.Output)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		got[k] = v
	}
	for _, c := range deniedCalls() {
		if got[c[0]] != "1" {
			t.Errorf("%s: %q, want errno 1 (EPERM)", c[0], got[c[0]])
		}
	}
	if got["clone3"] != "38" {
		t.Errorf("clone3: %q, want errno 38 (ENOSYS)", got["clone3"])
	}
	if t.Failed() {
		t.Logf("probe output:\n%s", res.Output)
	}
	if runtime.GOARCH == "amd64" {
		requireTool(t, "gcc")
		const compat = "#include <stdio.h>\nint main(void) { long r; __asm__ volatile (\"int $0x80\" : \"=a\"(r) : \"a\"(20L) : \"memory\"); printf(\"%ld\\n\", r); return 0; }\n"
		if err := sb.WriteFile(t.Context(), "compat.c", []byte(compat)); err != nil {
			t.Fatal(err)
		}
		res := mustExec(t, sb, "gcc -o /tmp/compat compat.c && /tmp/compat", sandbox.Limits{Timeout: 2 * time.Minute})
		if strings.TrimSpace(string(res.Output)) != "-1" {
			t.Errorf("a 32-bit getpid from a 64-bit program returned %q (%s), want -1 (EPERM)", res.Output, res.Summary())
		}
	}
}

// noInheritedDescriptors: a command starts with standard input, output
// and error only: no descriptor of the server or of the sandbox's setup
// (a folder opened outside would lead out of the sandbox).
func (s *suite) noInheritedDescriptors(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	if err := sb.Place(t.Context(), sandbox.SkillsDir+"/probe-0fd0fd00", skillPackage(t, "fds")); err != nil {
		t.Fatal(err)
	}
	// The shell becomes ls, which lists its own descriptors: those it was
	// started with, and the folder it reads.
	res := mustExec(t, sb, `exec ls -l /proc/self/fd`, sandbox.Limits{})
	lines := strings.Split(strings.TrimSpace(string(res.Output)), "\n")[1:]
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) < 11 {
			t.Fatalf("listing: %q", res.Output)
		}
		n, err := strconv.Atoi(f[8])
		if err != nil || n > 2 && !(strings.HasPrefix(f[10], "/proc/") && strings.HasSuffix(f[10], "/fd")) {
			t.Errorf("a command inherited descriptor %s", strings.Join(f[8:], " "))
		}
	}
	if len(lines) != 4 {
		t.Errorf("descriptors: %q", res.Output)
	}
}

// ordinaryWork: what real skill scripts do runs under the filter: Python
// with threads and subprocesses, Node.js with worker threads and child
// processes, git, gcc, tar and pip installing into a folder.
func (s *suite) ordinaryWork(t *testing.T) {
	requireTool(t, "python3", "node", "git", "gcc", "tar")
	sb := s.create(t, sandbox.CreateParams{})
	if err := sb.WriteFile(t.Context(), "probe_pkg-1.0-py3-none-any.whl", wheel(t)); err != nil {
		t.Fatal(err)
	}
	steps := []struct{ name, cmd string }{
		{"python", `python3 -c 'import threading, subprocess, tempfile, multiprocessing
r = []
ts = [threading.Thread(target=lambda: r.append(subprocess.run(["echo", "x"], capture_output=True).stdout)) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
with tempfile.NamedTemporaryFile() as f: f.write(b"x")
print("python", len(r), multiprocessing.cpu_count() > 0)'`},
		{"node", `node -e 'const { Worker } = require("worker_threads"); const cp = require("child_process");
new Worker("require(\"worker_threads\").parentPort.postMessage(6*7)", { eval: true }).on("message", m => console.log("node", m, cp.execSync("echo child").toString().trim()))'`},
		{"git", `git init -q repo && cd repo && echo hi > a && git add a && git -c user.name=t -c user.email=t@example.com commit -qm first && git log --oneline | wc -l`},
		{"gcc", `printf '#include <stdio.h>\nint main(void){puts("compiled");return 0;}\n' > m.c && gcc -o /tmp/m m.c && /tmp/m && gcc -o m m.c && ./m`},
		{"tar", `mkdir -p t/d && echo x > t/d/f && tar czf t.tgz t && rm -r t && tar xzf t.tgz && cat t/d/f`},
		{"pip", `python3 -m pip install -q --no-index --no-cache-dir --disable-pip-version-check --target lib ./probe_pkg-1.0-py3-none-any.whl && PYTHONPATH=lib python3 -c 'import probe_pkg; print("pip", probe_pkg.VALUE)'`},
	}
	want := map[string]string{"python": "python 4 True", "node": "node 42 child", "git": "1", "gcc": "compiled\ncompiled", "tar": "x", "pip": "pip 42"}
	for _, st := range steps {
		res := mustExec(t, sb, st.cmd, sandbox.Limits{Timeout: 3 * time.Minute})
		if res.ExitCode != 0 || strings.TrimSpace(string(res.Output)) != want[st.name] {
			t.Errorf("%s: %s\n%s", st.name, res.Summary(), res.Output)
		}
	}
}

// Wheel is a small pure-Python wheel, probe_pkg 1.0 (VALUE = 42), with a
// valid RECORD: what pip installs in tests.
func Wheel(t testing.TB) []byte { return wheel(t) }

// wheel builds a small pure-Python wheel with a valid RECORD.
func wheel(t testing.TB) []byte {
	files := []struct{ name, body string }{
		{"probe_pkg/__init__.py", "VALUE = 42\n"},
		{"probe_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: probe-pkg\nVersion: 1.0\n"},
		{"probe_pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: skilld-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := z.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("probe_pkg-1.0.dist-info/RECORD,,\n")
	w, _ := z.Create("probe_pkg-1.0.dist-info/RECORD")
	w.Write([]byte(record.String()))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// privateTmp: /tmp and /dev/shm are writable, TMPDIR points at /tmp, and
// both are the command's own: gone when it ends, never the host's.
func (s *suite) privateTmp(t *testing.T) {
	requireTool(t, "gcc")
	sb := s.create(t, sandbox.CreateParams{})
	marker := "skilld-tmp-" + random()
	res := mustExec(t, sb, fmt.Sprintf(`set -e
f=$(mktemp); echo x > "$f"; d=$(mktemp -d); echo "tmpdir=$TMPDIR"
echo shm > /dev/shm/%[1]s && echo tmp > /tmp/%[1]s
printf 'int main(void){return 0;}\n' > /tmp/x.c && gcc -o /tmp/x /tmp/x.c && /tmp/x && echo compiled`, marker), sandbox.Limits{Timeout: 2 * time.Minute})
	if res.ExitCode != 0 || !strings.Contains(string(res.Output), "tmpdir=/tmp\n") || !strings.Contains(string(res.Output), "compiled") {
		t.Fatalf("writing /tmp and /dev/shm: %s\n%s", res.Summary(), res.Output)
	}
	res = mustExec(t, sb, fmt.Sprintf("ls -A /tmp /dev/shm | grep -c %s; true", marker), sandbox.Limits{})
	if strings.TrimSpace(string(res.Output)) != "0" {
		t.Errorf("the next command sees the last one's /tmp or /dev/shm: %q", res.Output)
	}
	for _, p := range []string{"/tmp/" + marker, "/dev/shm/" + marker} {
		if _, err := os.Lstat(p); err == nil {
			os.Remove(p)
			t.Errorf("a command's %s landed on the host", p)
		}
	}
}

// diskQuota: with a disk limit, writing past it fails inside with ENOSPC
// (bytes and files alike), the host loses at most the limit, the task goes
// on, and a reopened sandbox keeps both its files and its limit. A
// provider that cannot enforce a limit refuses one.
func (s *suite) diskQuota(t *testing.T) {
	const quota = 64 << 20
	if _, ok := s.Provider.Info().Enforced[sandbox.LimitDisk]; !ok {
		_, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: "t-" + random(), Disk: quota})
		wantCode(t, err, skilld.EUNAVAILABLE)
		if err != nil && !strings.Contains(err.Error(), "disk") {
			t.Errorf("refusing a disk limit: %v", err)
		}
		return
	}
	id := "t-" + random()
	sb := s.create(t, sandbox.CreateParams{ID: id, Disk: quota})
	before := sandboxDisk(t, s.DiskPath, id)
	res := mustExec(t, sb, "head -c 3G /dev/zero > big; echo rc=$?; ls -l big", sandbox.Limits{Timeout: 3 * time.Minute})
	// What the command wrote reaches what holds the workspace on
	// writeback: the workspace's own file system is flushed (only it: a
	// sync of every file system would write out what every test beside
	// this one has written, and hold them all up).
	syncWorkspace(t, sb)
	after := sandboxDisk(t, s.DiskPath, id)
	if !strings.Contains(string(res.Output), "No space left on device") {
		t.Errorf("writing 3 GiB under a 64 MiB limit: %s", res.Output)
	}
	switch lost := after - before; {
	case lost > quota+(16<<20):
		t.Errorf("the host lost %d MiB for a %d MiB limit", lost>>20, quota>>20)
	case lost < quota/2:
		t.Errorf("the host's disk under the sandbox's folder grew by %d MiB after the command filled its %d MiB: the measure misses the workspace", lost>>20, quota>>20)
	}
	res = mustExec(t, sb, `rm big; i=0; while [ $i -lt 1000000 ] && true > f$i; do i=$((i+1)); done; echo files=$i`, sandbox.Limits{Timeout: 3 * time.Minute})
	var n int
	if m := regexp.MustCompile(`files=(\d+)`).FindSubmatch(res.Output); m != nil {
		n, _ = strconv.Atoi(string(m[1]))
	}
	if !strings.Contains(string(res.Output), "No space left on device") || n == 0 || n >= 1000000 {
		t.Errorf("making a million files under a 64 MiB limit stopped at %d: %.300s", n, res.Output)
	}
	if res := mustExec(t, sb, "rm -f f*; echo room > after.txt && cat after.txt", sandbox.Limits{Timeout: time.Minute}); string(res.Output) != "room\n" {
		t.Errorf("after filling the disk: %s %q", res.Summary(), res.Output)
	}
	again, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: id, Reopen: true, Disk: quota})
	if err != nil {
		t.Fatal(err)
	}
	res = mustExec(t, again, "cat after.txt; head -c 1G /dev/zero > big; echo rc=$?", sandbox.Limits{Timeout: 3 * time.Minute})
	if !strings.HasPrefix(string(res.Output), "room\n") || !strings.Contains(string(res.Output), "No space left on device") {
		t.Errorf("the reopened sandbox: %q", res.Output)
	}
	if _, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: "t-" + random(), Disk: -1}); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("a negative disk limit: %v", err)
	}
}

// uidPerSandbox: two sandboxes never share a uid in the host's view: each
// one's files and processes belong to its own uid, neither root nor the
// server's.
func (s *suite) uidPerSandbox(t *testing.T) {
	a := s.create(t, sandbox.CreateParams{})
	b := s.create(t, sandbox.CreateParams{})
	owner := func(sb sandbox.Sandbox) uint32 {
		info, err := os.Stat(sb.HostPath())
		if err != nil {
			t.Fatal(err)
		}
		return info.Sys().(*syscall.Stat_t).Uid
	}
	ua, ub := owner(a), owner(b)
	if ua == ub || ua == 0 || ub == 0 || int(ua) == os.Geteuid() || int(ub) == os.Geteuid() {
		t.Fatalf("sandboxes' host uids: %d and %d (server %d)", ua, ub, os.Geteuid())
	}
	for _, c := range []struct {
		sb  sandbox.Sandbox
		uid uint32
	}{{a, ua}, {b, ub}} {
		secs := fmt.Sprintf("%d.%d", 5000+c.uid%1000, time.Now().UnixNano()%1000)
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.sb.Exec(t.Context(), sandbox.ExecParams{Command: "sleep " + secs, Limits: sandbox.Limits{Timeout: 3 * time.Second}})
		}()
		var seen bool
		for deadline := time.Now().Add(5 * time.Second); !seen && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			for _, p := range hostProcesses("sleep " + secs) {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
				for line := range strings.SplitSeq(string(b), "\n") {
					if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
						seen = true
						for id := range strings.FieldsSeq(rest) {
							if id != strconv.Itoa(int(c.uid)) {
								t.Errorf("a command of the sandbox of uid %d runs with uids %q", c.uid, rest)
							}
						}
					}
				}
			}
		}
		if !seen {
			t.Errorf("the command of uid %d was not found among the host's processes", c.uid)
		}
		<-done
	}
}

// syncWorkspace flushes the file system of sb's workspace on the host
// (syncfs), or every one when the provider has no host folder for it.
func syncWorkspace(t *testing.T, sb sandbox.Sandbox) {
	t.Helper()
	if sb.HostPath() == "" {
		unix.Sync()
		return
	}
	f, err := os.Open(sb.HostPath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
}

// sandboxDisk is the disk the host has given sandbox id: the allocated
// blocks of the files below dir (the provider's DiskPath) in a folder
// named id, on dir's own file system (not what is mounted there, such as
// the workspace's view of its own files). Other sandboxes and other
// processes writing to the same disk meanwhile, as the tests running
// beside this one do, do not count. It fails t when no such file exists:
// a measure of nothing would prove nothing.
func sandboxDisk(t *testing.T, dir, id string) int64 {
	t.Helper()
	var root unix.Stat_t
	if err := unix.Stat(dir, &root); err != nil {
		t.Fatal(err)
	}
	var n int64
	found := false
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil // a sandbox of another test went meanwhile
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			return nil
		}
		if st.Dev != root.Dev {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type().IsRegular() && slices.Contains(strings.Split(filepath.ToSlash(rel), "/"), id) {
			n += st.Blocks * 512
			found = true
		}
		return nil
	})
	if !found {
		t.Fatalf("no file of sandbox %s under %s to measure its disk by", id, dir)
	}
	return n
}
