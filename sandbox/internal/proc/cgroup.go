package proc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skilld/skilld/sandbox/internal/mountinfo"
)

// Controllers of cgroup v1 this package uses.
const (
	ctlMemory  = "memory"
	ctlPids    = "pids"
	ctlCPUAcct = "cpuacct"
)

// cgroups are the cgroup v1 folders under which each command gets its own
// group, one per controller that is mounted and writable here ("" when
// not).
type cgroups struct {
	parent map[string]string // controller → our parent folder
}

// detectCgroups finds, for each controller, the v1 hierarchy this process
// is in and makes a parent folder for its commands in it
// ("skilld-<pid>-<random>"), removing parents that processes which are
// gone left behind.
func detectCgroups() (*cgroups, []string) {
	cg := &cgroups{parent: map[string]string{}}
	var notes []string
	var b [4]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	mounts, err := v1Mounts()
	if err != nil {
		return cg, []string{"cgroups: cannot read /proc/self/mountinfo: " + err.Error()}
	}
	paths, err := selfCgroups()
	if err != nil {
		return cg, []string{"cgroups: cannot read /proc/self/cgroup: " + err.Error()}
	}
	for _, ctl := range []string{ctlMemory, ctlPids, ctlCPUAcct} {
		m, ok := mounts[ctl]
		p, ok2 := paths[ctl]
		if !ok || !ok2 {
			notes = append(notes, fmt.Sprintf("cgroup v1 %s controller: not mounted", ctl))
			continue
		}
		rel := strings.TrimPrefix(p, m.root)
		base := filepath.Join(m.point, rel)
		removeStale(base)
		// One parent per Controls: a process may hold several (tests do),
		// and closing one must not pull the folder from under another.
		parent := filepath.Join(base, fmt.Sprintf("skilld-%d-%s", os.Getpid(), id))
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			notes = append(notes, fmt.Sprintf("cgroup v1 %s controller: %s is not writable (%v)", ctl, base, errors.Unwrap(err)))
			continue
		}
		cg.parent[ctl] = parent
	}
	return cg, notes
}

type mount struct{ point, root string }

// v1Mounts maps each cgroup v1 controller to where its hierarchy is mounted.
func v1Mounts() (map[string]mount, error) {
	table, err := mountinfo.Read()
	if err != nil {
		return nil, err
	}
	out := map[string]mount{}
	for _, m := range table {
		if m.FSType != "cgroup" {
			continue
		}
		for opt := range strings.SplitSeq(m.Super, ",") {
			if opt == ctlMemory || opt == ctlPids || opt == ctlCPUAcct {
				out[opt] = mount{point: m.Point, root: m.Root}
			}
		}
	}
	return out, nil
}

// selfCgroups maps each v1 controller to this process's group in it.
func selfCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[1] == "" {
			continue
		}
		for ctl := range strings.SplitSeq(parts[1], ",") {
			out[ctl] = parts[2]
		}
	}
	return out, nil
}

// removeStale removes the parents of processes that are gone, killing
// what their commands left: a server killed while a command started can
// leave a process behind that nothing else would stop (bubblewrap's
// sandbox, still waiting for its monitor, holding copies of the mounts).
func removeStale(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "skilld-")
		pid, _, _ := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || !e.IsDir() || n == os.Getpid() {
			continue
		}
		if err := syscall.Kill(n, 0); err == nil || err == syscall.EPERM {
			continue // that process is alive
		}
		dir := filepath.Join(base, e.Name())
		kids, _ := os.ReadDir(dir)
		for _, k := range kids {
			if k.IsDir() {
				(&group{dirs: map[string]string{"": filepath.Join(dir, k.Name())}}).killAll()
			}
		}
		syscall.Rmdir(dir)
	}
}

// close removes the parents (they are empty once every command ended).
func (cg *cgroups) close() {
	for _, p := range cg.parent {
		syscall.Rmdir(p)
	}
}

// group is one command's cgroups.
type group struct {
	dirs map[string]string // controller → folder
}

// newGroup makes a command's groups and sets their limits.
func (cg *cgroups) newGroup(memory int64, processes int) (*group, error) {
	var b [6]byte
	rand.Read(b[:])
	name := "cmd-" + hex.EncodeToString(b[:])
	g := &group{dirs: map[string]string{}}
	for ctl, parent := range cg.parent {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			g.remove()
			return nil, fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		g.dirs[ctl] = dir
	}
	var err error
	if dir, ok := g.dirs[ctlMemory]; ok {
		err = write(dir, "memory.limit_in_bytes", memory)
		if err == nil {
			// Swap counts too where swap accounting is on; without it
			// the file is missing, which is fine.
			if werr := write(dir, "memory.memsw.limit_in_bytes", memory); werr != nil && !errors.Is(werr, os.ErrNotExist) {
				err = werr
			}
		}
	}
	if dir, ok := g.dirs[ctlPids]; ok && err == nil {
		err = write(dir, "pids.max", int64(processes))
	}
	if err != nil {
		g.remove()
		return nil, fmt.Errorf("setting cgroup limits: %w", err)
	}
	return g, nil
}

func write(dir, file string, v int64) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(v, 10)), 0)
}

// giveTo lets uid move its own processes into the group: the command
// joins it after it became that user.
func (g *group) giveTo(uid, gid int) error {
	for _, f := range g.joinFiles() {
		if err := os.Chown(f, uid, gid); err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	return nil
}

// joinFiles are the files a command's first process joins the group
// through: each hierarchy's tasks file, where writing 0 moves the writing
// thread. (A single-threaded process is its one thread.) A move through
// cgroup.procs, or of any other thread, takes the kernel's global lock on
// every thread group's cgroups, and that waits for an RCU grace period
// (about 8 ms on the 2-vCPU VM, three quarters of a command's start);
// moving oneself through tasks does not take it.
func (g *group) joinFiles() []string {
	var out []string
	for _, d := range g.dirs {
		out = append(out, filepath.Join(d, "tasks"))
	}
	return out
}

// exceeded reports which limit the group's counters say was hit: memory
// (the OOM killer killed a process), processes (a fork was refused) or CPU
// (the group used more than cpu).
func (g *group) exceeded(cpu time.Duration) string {
	if d, ok := g.dirs[ctlMemory]; ok && counter(filepath.Join(d, "memory.oom_control"), "oom_kill") > 0 {
		return "memory"
	}
	if d, ok := g.dirs[ctlPids]; ok && counter(filepath.Join(d, "pids.events"), "max") > 0 {
		return "processes"
	}
	if d, ok := g.dirs[ctlCPUAcct]; ok {
		b, err := os.ReadFile(filepath.Join(d, "cpuacct.usage"))
		if n, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && perr == nil && time.Duration(n) > cpu {
			return "cpu"
		}
	}
	return ""
}

// counter reads "name value" from a flat-keyed cgroup file.
func counter(file, name string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == name {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// killAll kills every process in the group until none is left, then
// removes the group. A process forking while it is killed is caught in a
// later round.
func (g *group) killAll() {
	deadline := time.Now().Add(5 * time.Second)
	// Processes of a PID namespace whose init just died are often still
	// exiting: look again soon, then less and less often.
	wait := 100 * time.Microsecond
	for time.Now().Before(deadline) {
		alive := false
		for _, d := range g.dirs {
			b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			for f := range strings.FieldsSeq(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					alive = true
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if !alive {
			break
		}
		time.Sleep(wait)
		wait = min(2*wait, 10*time.Millisecond)
	}
	g.remove()
}

// remove deletes the group's folders; a folder still holding a process
// stays (rmdir refuses it) and the parent's cleanup retries later.
func (g *group) remove() {
	for _, d := range g.dirs {
		for i := 0; i < 200 && syscall.Rmdir(d) == syscall.EBUSY; i++ {
			time.Sleep(time.Millisecond)
		}
	}
}
