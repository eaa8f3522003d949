// Package sandboxtest is the conformance suite for sandbox providers: the
// contract every provider keeps (commands, limits, files, placement,
// removal), and for providers that isolate, the escape proofs: what a
// hostile command tries and must fail at.
package sandboxtest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
)

// Options configure a run of the suite.
type Options struct {
	// Provider is the provider under test. The suite creates and destroys
	// its own sandboxes in it.
	Provider sandbox.Provider
	// Isolated runs the escape proofs: the provider claims that commands
	// cannot see or change the host beyond /workspace.
	Isolated bool
	// HostPaths are host folders commands must not see (the provider's
	// own folders, a data directory); the suite adds its own.
	HostPaths []string
	// DiskPath is a folder on the file system that holds the provider's
	// workspaces: the disk quota proof measures the files below it in a
	// folder named for the sandbox.
	DiskPath string
	// UIDPerSandbox runs the proof that every sandbox runs as a host uid
	// of its own (bwrap as root).
	UIDPerSandbox bool
}

// CanaryEnv is set in the test process's environment while the suite
// runs: no command may see it.
const CanaryEnv = "SKILLD_SANDBOXTEST_CANARY"

// Run runs the suite. It sets CanaryEnv with t.Setenv, so t must not be
// parallel; its subtests are.
func Run(t *testing.T, o Options) {
	canary := "canary-" + random()
	t.Setenv(CanaryEnv, canary)
	s := &suite{Options: o, canary: canary}
	t.Run("Contract", func(t *testing.T) {
		for _, c := range []struct {
			name string
			fn   func(*testing.T)
		}{
			{"ExecOutputAndStatus", s.execOutputAndStatus},
			{"WorkspaceFiles", s.workspaceFiles},
			{"MinimalEnvironment", s.minimalEnvironment},
			{"Timeout", s.timeout},
			{"OutputLimit", s.outputLimit},
			{"Place", s.place},
			{"PathsStayInside", s.pathsStayInside},
			{"CreateAndDestroy", s.createAndDestroy},
			{"Reopen", s.reopen},
			{"DestroyStopsCommands", s.destroyStopsCommands},
			{"PlacedCopiesAreTheirOwn", s.placedCopiesAreTheirOwn},
			{"ConcurrentSandboxesApart", s.concurrentApart},
			{"LoaderVariablesRefused", s.loaderVariables},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.fn(t)
			})
		}
	})
	if !o.Isolated {
		return
	}
	t.Run("Escape", func(t *testing.T) {
		for _, c := range []struct {
			name string
			fn   func(*testing.T)
		}{
			{"ServerEnvironmentAndCommandLine", s.serverEnvHidden},
			{"NoCapabilities", s.noCapabilities},
			{"HostFilesHidden", s.hostFilesHidden},
			{"WritesStayInWorkspace", s.writesStayInWorkspace},
			{"NoNetwork", s.noNetwork},
			{"NoProcessOutlivesItsCommand", s.noProcessOutlives},
			{"CannotSignalTheHost", s.cannotSignal},
			{"ForkBombContained", s.forkBomb},
			{"MemoryLimit", s.memoryLimit},
			{"CPULimit", s.cpuLimit},
			{"PlacedSkillsImmutable", s.placedImmutable},
			{"PreloadedLibrariesUnprivileged", s.preloadUnprivileged},
			{"NoPrivilegedFiles", s.noPrivilegedFiles},
			{"KeyringsClosed", s.keyringsClosed},
			{"KernelSurfacesClosed", s.kernelSurfacesClosed},
			{"NoInheritedDescriptors", s.noInheritedDescriptors},
			{"OrdinaryWorkRuns", s.ordinaryWork},
			{"PrivateTmp", s.privateTmp},
			{"DiskQuota", s.diskQuota},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.fn(t)
			})
		}
		if o.UIDPerSandbox {
			t.Run("UIDPerSandbox", s.uidPerSandbox)
		}
	})
}

type suite struct {
	Options
	canary string
}

func random() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// create makes a sandbox destroyed at the end of the test.
func (s *suite) create(t *testing.T, p sandbox.CreateParams) sandbox.Sandbox {
	t.Helper()
	if p.ID == "" {
		p.ID = "t-" + random()
	}
	sb, err := s.Provider.Create(t.Context(), p)
	if err != nil {
		t.Fatalf("Create(%q): %v", p.ID, err)
	}
	t.Cleanup(func() {
		if err := sb.Destroy(t.Context()); err != nil {
			t.Errorf("Destroy: %v", err)
		}
	})
	return sb
}

// mustExec runs a command that must run (any exit status).
func mustExec(t *testing.T, sb sandbox.Sandbox, cmd string, lim sandbox.Limits) *sandbox.Result {
	t.Helper()
	res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: cmd, Limits: lim})
	if err != nil {
		t.Fatalf("Exec(%q): %v", cmd, err)
	}
	return res
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := skilld.ErrorCode(err); got != code {
		t.Errorf("error %v: code %q, want %q", err, got, code)
	}
}

// skillPackage is a small skill with an executable script.
func skillPackage(t *testing.T, marker string) *pack.Package {
	t.Helper()
	pkg, err := pack.New([]pack.File{
		{Path: "SKILL.md", Data: []byte("---\nname: probe\ndescription: a probe\n---\nRun scripts/run.sh.\n")},
		{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho " + marker + "\n"), Exec: true},
		{Path: "data/notes.txt", Data: []byte("notes " + marker + "\n")},
	}, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func (s *suite) execOutputAndStatus(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	res := mustExec(t, sb, "echo out; echo err >&2; exit 3", sandbox.Limits{})
	if res.ExitCode != 3 || res.Limit != "" || !strings.Contains(string(res.Output), "out\n") || !strings.Contains(string(res.Output), "err\n") {
		t.Errorf("result %+v (output %q)", res, res.Output)
	}
	if !strings.Contains(res.Summary(), "exit status 3") {
		t.Errorf("summary %q", res.Summary())
	}
	for _, bad := range []string{"", "  ", "echo \x00", strings.Repeat("x", sandbox.MaxCommand+1)} {
		if _, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: bad}); err == nil {
			t.Errorf("Exec(%.20q) ran", bad)
		}
	}
}

func (s *suite) workspaceFiles(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	mustExec(t, sb, "echo hello > made-by-command.txt", sandbox.Limits{})
	for _, p := range []string{"made-by-command.txt", "./made-by-command.txt", sandbox.Workdir + "/made-by-command.txt"} {
		if b, err := sb.ReadFile(t.Context(), p, 1<<20); err != nil || string(b) != "hello\n" {
			t.Errorf("ReadFile(%q) = %q, %v", p, b, err)
		}
	}
	if err := sb.WriteFile(t.Context(), "deep/er/by-tool.txt", []byte("from the tool\n")); err != nil {
		t.Fatal(err)
	}
	// What a tool wrote, a command can read, change and remove.
	res := mustExec(t, sb, "cat deep/er/by-tool.txt && echo more >> deep/er/by-tool.txt && mkdir deep/er/sub && rm -r deep", sandbox.Limits{})
	if res.ExitCode != 0 || string(res.Output) != "from the tool\n" {
		t.Errorf("command on the tool's file: %d %q", res.ExitCode, res.Output)
	}
	// write_file keeps a script executable.
	mustExec(t, sb, "printf '#!/bin/sh\\necho v1\\n' > tool.sh && chmod +x tool.sh", sandbox.Limits{})
	if err := sb.WriteFile(t.Context(), "tool.sh", []byte("#!/bin/sh\necho v2\n")); err != nil {
		t.Fatal(err)
	}
	if res := mustExec(t, sb, "./tool.sh", sandbox.Limits{}); string(res.Output) != "v2\n" {
		t.Errorf("rewritten script: %d %q", res.ExitCode, res.Output)
	}
	info, err := sb.Stat(t.Context(), "tool.sh")
	if err != nil || info.Size != int64(len("#!/bin/sh\necho v2\n")) || info.Mode&0o100 == 0 {
		t.Errorf("Stat: %+v, %v", info, err)
	}
	list, err := sb.List(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range list {
		names = append(names, f.Path)
	}
	if !slices.Equal(names, []string{"made-by-command.txt", sandbox.SkillsDir, "tool.sh"}) {
		t.Errorf("List(.) = %q", names)
	}
	if err := sb.WriteFile(t.Context(), "tool.sh/x", []byte("x")); err == nil {
		t.Error("wrote under a file")
	}
	if err := sb.WriteFile(t.Context(), sandbox.Workdir, []byte("x")); err == nil {
		t.Error("wrote the workspace itself")
	}
}

func (s *suite) minimalEnvironment(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{Env: []string{"GIVEN_BY_AGENT=yes", "LANG=en_US.UTF-8"}})
	res := mustExec(t, sb, "env", sandbox.Limits{})
	allowed := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, "LANG": true, "USER": true, "PWD": true, "SHLVL": true, "OLDPWD": true, "_": true, "GIVEN_BY_AGENT": true}
	got := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(res.Output)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
		if !allowed[k] {
			t.Errorf("unexpected variable %q in the command's environment", line)
		}
	}
	if got["GIVEN_BY_AGENT"] != "yes" || got["LANG"] != "en_US.UTF-8" || got["PATH"] == "" {
		t.Errorf("environment %q", res.Output)
	}
	if strings.Contains(string(res.Output), s.canary) {
		t.Error("the server's environment reached the command")
	}
	for _, bad := range [][]string{{"NOEQUALS"}, {"1X=y"}, {"A-B=c"}, {"X=a\x00b"}} {
		_, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: "t-" + random(), Env: bad})
		wantCode(t, err, skilld.EINVALID)
	}
}

func (s *suite) timeout(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	res := mustExec(t, sb, "echo started; sleep 30; echo never", sandbox.Limits{Timeout: 500 * time.Millisecond})
	if res.Limit != sandbox.LimitTimeout || strings.Contains(string(res.Output), "never") || !strings.Contains(string(res.Output), "started") {
		t.Errorf("result %+v, output %q", res, res.Output)
	}
	if res.Duration > 10*time.Second {
		t.Errorf("a 500 ms timeout took %s", res.Duration)
	}
	if !strings.Contains(res.Summary(), "time limit of 500ms") {
		t.Errorf("summary %q", res.Summary())
	}
	// The sandbox goes on.
	if res := mustExec(t, sb, "echo next", sandbox.Limits{}); string(res.Output) != "next\n" {
		t.Errorf("after a timeout: %+v", res)
	}
}

func (s *suite) outputLimit(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	res := mustExec(t, sb, "yes", sandbox.Limits{Output: 1000, Timeout: time.Minute})
	if res.Limit != sandbox.LimitOutput || !res.Truncated || len(res.Output) != 1000 {
		t.Errorf("limit %q truncated %v, %d bytes", res.Limit, res.Truncated, len(res.Output))
	}
	if res.Duration > 30*time.Second {
		t.Errorf("yes was stopped only after %s", res.Duration)
	}
}

func (s *suite) place(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	pkg := skillPackage(t, "placed-ok")
	dir := sandbox.SkillsDir + "/probe-12345678"
	if err := sb.Place(t.Context(), dir, pkg); err != nil {
		t.Fatal(err)
	}
	res := mustExec(t, sb, "sh "+dir+"/scripts/run.sh && ./"+dir+"/scripts/run.sh && cat "+dir+"/data/notes.txt && test ! -x "+dir+"/data/notes.txt", sandbox.Limits{})
	if res.ExitCode != 0 || string(res.Output) != "placed-ok\nplaced-ok\nnotes placed-ok\n" {
		t.Errorf("running the placed script: %d %q", res.ExitCode, res.Output)
	}
	if b, err := sb.ReadFile(t.Context(), dir+"/SKILL.md", 1<<20); err != nil || !strings.Contains(string(b), "Run scripts/run.sh") {
		t.Errorf("ReadFile SKILL.md: %q, %v", b, err)
	}
	list, err := sb.List(t.Context(), sandbox.SkillsDir)
	if err != nil || len(list) != 1 || list[0].Path != dir || !list[0].Mode.IsDir() || !list[0].ReadOnly {
		t.Errorf("List(skills) = %+v, %v", list, err)
	}
	list, err = sb.List(t.Context(), dir)
	if err != nil || len(list) != 3 || list[0].Path != dir+"/SKILL.md" || list[1].Path != dir+"/data" || list[2].Path != dir+"/scripts" || !list[0].ReadOnly {
		t.Errorf("List(%s) = %+v, %v", dir, list, err)
	}
	// Idempotent for the same package; refused for another one.
	if err := sb.Place(t.Context(), dir, pkg); err != nil {
		t.Errorf("placing again: %v", err)
	}
	wantCode(t, sb.Place(t.Context(), dir, skillPackage(t, "other")), skilld.ECONFLICT)
	for _, bad := range []string{"probe", "skills", "skills/", "skills/a/b", "skills/..", "other/x", "/workspace/skills/x"} {
		wantCode(t, sb.Place(t.Context(), bad, pkg), skilld.EINVALID)
	}
	// The tools refuse to write into skills/.
	for _, p := range []string{dir + "/SKILL.md", dir + "/new.txt", sandbox.SkillsDir + "/new.txt", sandbox.Workdir + "/" + sandbox.SkillsDir + "/x/y"} {
		wantCode(t, sb.WriteFile(t.Context(), p, []byte("tampered")), skilld.EFORBIDDEN)
	}
	if b, _ := sb.ReadFile(t.Context(), dir+"/SKILL.md", 1<<20); strings.Contains(string(b), "tampered") {
		t.Error("SKILL.md was changed")
	}
}

func (s *suite) pathsStayInside(t *testing.T) {
	sb := s.create(t, sandbox.CreateParams{})
	for _, p := range []string{"../x", "a/../../x", "/etc/passwd", "/workspace/../etc/passwd", "/", "a\\b", "a\x00b", ""} {
		if _, err := sb.ReadFile(t.Context(), p, 1<<20); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("ReadFile(%q): %v, want invalid", p, err)
		}
		if err := sb.WriteFile(t.Context(), p, []byte("x")); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("WriteFile(%q): %v, want invalid", p, err)
		}
	}
	_, err := sb.ReadFile(t.Context(), "missing.txt", 1<<20)
	wantCode(t, err, skilld.ENOTFOUND)
	if err := sb.WriteFile(t.Context(), "big.txt", make([]byte, 2000)); err != nil {
		t.Fatal(err)
	}
	_, err = sb.ReadFile(t.Context(), "big.txt", 1000)
	wantCode(t, err, skilld.ETOOLARGE)

	host := t.TempDir()
	secret := filepath.Join(host, "secret.txt")
	os.WriteFile(secret, []byte("host secret"), 0o644)
	// Links and special files a command leaves behind lead nowhere.
	mustExec(t, sb, fmt.Sprintf("ln -s %s abs-link; ln -s ../../../../../../../../.. up; ln -s %s dir-link; mkfifo fifo", secret, host), sandbox.Limits{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{"abs-link", "up/etc/passwd", "dir-link/secret.txt", "fifo"} {
			if b, err := sb.ReadFile(t.Context(), p, 1<<20); err == nil {
				t.Errorf("ReadFile(%q) read %q", p, b)
			}
		}
		if err := sb.WriteFile(t.Context(), "dir-link/planted.txt", []byte("x")); err == nil {
			t.Error("WriteFile through a link to a host folder succeeded")
		}
		if _, err := sb.List(t.Context(), "up"); err == nil {
			t.Error("List through a link out succeeded")
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("reading a FIFO or a link hung")
	}
	if _, err := os.Stat(filepath.Join(host, "planted.txt")); err == nil {
		t.Error("a file was written in a host folder")
	}
	// Writing over a link replaces the link, not its target.
	if err := sb.WriteFile(t.Context(), "abs-link", []byte("replaced")); err != nil {
		t.Errorf("WriteFile over a link: %v", err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "host secret" {
		t.Errorf("the link's target changed: %q", b)
	}
}

// reopen: a task resumed after a restart takes over its sandbox, with the
// files it wrote; skills are placed again. Without Reopen the ID is taken;
// Reopen of an ID never used creates the sandbox.
func (s *suite) reopen(t *testing.T) {
	id := "t-" + random()
	first := s.create(t, sandbox.CreateParams{ID: id})
	mustExec(t, first, "mkdir -p out && echo kept > out/result.txt", sandbox.Limits{})
	dir := sandbox.SkillsDir + "/probe-12345678"
	pkg := skillPackage(t, "reopened")
	if err := first.Place(t.Context(), dir, pkg); err != nil {
		t.Fatal(err)
	}
	// The process that had it is gone: nothing destroys it.
	_, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: id})
	wantCode(t, err, skilld.ECONFLICT)
	again, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: id, Reopen: true})
	if err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	if b, err := again.ReadFile(t.Context(), "out/result.txt", 100); err != nil || string(b) != "kept\n" {
		t.Errorf("the reopened sandbox lost the task's file: %q, %v", b, err)
	}
	if err := again.Place(t.Context(), dir, pkg); err != nil {
		t.Fatalf("placing again after Reopen: %v", err)
	}
	if res := mustExec(t, again, "sh "+dir+"/scripts/run.sh && cat out/result.txt", sandbox.Limits{}); res.ExitCode != 0 || string(res.Output) != "reopened\nkept\n" {
		t.Errorf("after Reopen: %d %q", res.ExitCode, res.Output)
	}
	fresh := s.create(t, sandbox.CreateParams{ID: "t-" + random(), Reopen: true})
	if list, err := fresh.List(t.Context(), "."); err != nil || len(list) != 1 || list[0].Path != sandbox.SkillsDir {
		t.Errorf("Reopen of a new ID: %+v, %v", list, err)
	}
}

func (s *suite) createAndDestroy(t *testing.T) {
	id := "t-" + random()
	_, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: "bad/id"})
	wantCode(t, err, skilld.EINVALID)
	sb, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if sb.ID() != id {
		t.Errorf("ID() = %q", sb.ID())
	}
	_, err = s.Provider.Create(t.Context(), sandbox.CreateParams{ID: id})
	wantCode(t, err, skilld.ECONFLICT)
	// A task may leave folders without permissions; removal copes.
	mustExec(t, sb, "mkdir -p locked/inner && touch locked/inner/f && chmod 000 locked/inner && chmod 500 locked", sandbox.Limits{})
	host := sb.HostPath()
	if err := sb.Destroy(t.Context()); err != nil {
		t.Fatal(err)
	}
	if host != "" {
		if _, err := os.Stat(host); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the sandbox folder is still there: %v", err)
		}
	}
	if err := sb.Destroy(t.Context()); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
	_, err = sb.Exec(t.Context(), sandbox.ExecParams{Command: "true"})
	wantCode(t, err, skilld.EUNAVAILABLE)
	wantCode(t, sb.Place(t.Context(), sandbox.SkillsDir+"/x", skillPackage(t, "x")), skilld.EUNAVAILABLE)
	again, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: id})
	if err != nil {
		t.Fatalf("the ID of a removed sandbox: %v", err)
	}
	again.Destroy(t.Context())
}

func (s *suite) destroyStopsCommands(t *testing.T) {
	sb, err := s.Provider.Create(t.Context(), sandbox.CreateParams{ID: "t-" + random()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Time, 1)
	go func() {
		sb.Exec(t.Context(), sandbox.ExecParams{Command: "touch started && sleep 60"})
		done <- time.Now()
	}()
	// Destroy must find the command running, not yet to start.
	if !eventually(10*time.Second, func() bool {
		_, err := sb.Stat(t.Context(), "started")
		return err == nil
	}) {
		t.Fatal("the command did not start")
	}
	begin := time.Now()
	if err := sb.Destroy(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case end := <-done:
		if end.Sub(begin) > 10*time.Second {
			t.Errorf("the command ended %s after Destroy", end.Sub(begin))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Destroy left the command running")
	}
}

// placedCopiesAreTheirOwn: whatever a command does to its placed skill, a
// later sandbox placing the same package gets the package's bytes.
func (s *suite) placedCopiesAreTheirOwn(t *testing.T) {
	pkg := skillPackage(t, "original")
	dir := sandbox.SkillsDir + "/probe-abcdef01"
	a := s.create(t, sandbox.CreateParams{})
	if err := a.Place(t.Context(), dir, pkg); err != nil {
		t.Fatal(err)
	}
	mustExec(t, a, tamperScript(dir), sandbox.Limits{})
	b := s.create(t, sandbox.CreateParams{})
	if err := b.Place(t.Context(), dir, pkg); err != nil {
		t.Fatal(err)
	}
	res := mustExec(t, b, "sh "+dir+"/scripts/run.sh; cat "+dir+"/data/notes.txt; ls "+dir, sandbox.Limits{})
	if string(res.Output) != "original\nnotes original\nSKILL.md\ndata\nscripts\n" {
		t.Errorf("a later sandbox got %q", res.Output)
	}
}

// tamperScript tries every way of changing a placed skill's files.
func tamperScript(dir string) string {
	f := dir + "/scripts/run.sh"
	return strings.Join([]string{
		"chmod u+w " + f + " " + dir + " " + dir + "/scripts",
		"printf '#!/bin/sh\\necho PAYLOAD\\n' > " + f,
		"touch -d '2000-01-01' " + f,
		"echo PAYLOAD >> " + dir + "/data/notes.txt",
		"mv " + dir + "/data/notes.txt " + dir + "/data/moved.txt",
		"ln " + f + " hardlink && echo PAYLOAD > hardlink",
		"ln -sf /tmp/x " + dir + "/SKILL.md",
		"touch " + dir + "/added.txt",
		"rm -rf " + dir + "/scripts",
		"mv " + dir + " moved-skill",
		"rm -rf " + sandbox.SkillsDir + " ; mv " + sandbox.SkillsDir + " skills-moved",
		"true",
	}, "; ")
}

func (s *suite) concurrentApart(t *testing.T) {
	a := s.create(t, sandbox.CreateParams{})
	b := s.create(t, sandbox.CreateParams{})
	var wg sync.WaitGroup
	for i, sb := range []sandbox.Sandbox{a, b} {
		wg.Go(func() {
			for j := range 5 {
				mustExec(t, sb, fmt.Sprintf("echo %d > own-%d-%d.txt", i, i, j), sandbox.Limits{})
			}
		})
	}
	wg.Wait()
	for i, sb := range []sandbox.Sandbox{a, b} {
		res := mustExec(t, sb, "ls", sandbox.Limits{})
		want := ""
		for j := range 5 {
			want += fmt.Sprintf("own-%d-%d.txt\n", i, j)
		}
		if string(res.Output) != want+sandbox.SkillsDir+"\n" {
			t.Errorf("sandbox %d lists %q", i, res.Output)
		}
	}
}

// eventually reports whether cond holds within d, looking every 20 ms: the
// suite's wait for what it can see but is not told of (a file a command
// wrote, the host's process table).
func eventually(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
