// Package headroom watches what a server runs out of before it fails: free
// space on the file systems of its data and work folders, and free file
// descriptors. Below a threshold the server is degraded — it still
// serves, and its health check and metrics say what is short, so an
// operator acts before requests start failing.
package headroom

import (
	"cmp"
	"fmt"
	"os"
	"sort"
	"syscall"

	"github.com/skilld/skilld/sandbox"
)

// Defaults of the thresholds.
const (
	DefaultMinFreeDisk = 256 << 20
	DefaultMinFreeFDs  = 64
)

// Monitor reads the headroom of a set of folders and of the process.
type Monitor struct {
	// Paths names the folders to watch ("data", "work") and where they
	// are; each is on a file system whose free space counts.
	Paths map[string]string
	// MinFreeDisk and MinFreeFDs are the thresholds (the defaults when
	// zero; negative: never degraded for it).
	MinFreeDisk int64
	MinFreeFDs  int
}

// Sample is the headroom at one moment. A value that could not be read
// is -1.
type Sample struct {
	// FreeDisk is the bytes an unprivileged writer may still use, by
	// name of Paths.
	FreeDisk map[string]int64
	// FreeFDs is how many more files the process may open under its
	// RLIMIT_NOFILE; LimitFDs is that limit.
	FreeFDs, LimitFDs int
}

// Read samples the headroom now.
func (m *Monitor) Read() Sample {
	s := Sample{FreeDisk: map[string]int64{}, FreeFDs: -1, LimitFDs: -1}
	for name, p := range m.Paths {
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err != nil {
			s.FreeDisk[name] = -1
			continue
		}
		s.FreeDisk[name] = int64(st.Bavail) * st.Bsize
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		if open, err := openFiles(); err == nil {
			s.LimitFDs, s.FreeFDs = int(lim.Cur), int(lim.Cur)-open
		}
	}
	return s
}

// openFiles counts the process's open descriptors.
func openFiles() (int, error) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	// The folder's own descriptor is among them.
	return len(names) - 1, err
}

// Short says what is below its threshold in s, one sentence each, in a
// fixed order; none when the server has headroom.
func (m *Monitor) Short(s Sample) []string {
	var out []string
	minDisk, minFDs := cmp.Or(m.MinFreeDisk, DefaultMinFreeDisk), cmp.Or(m.MinFreeFDs, DefaultMinFreeFDs)
	names := make([]string, 0, len(s.FreeDisk))
	for n := range s.FreeDisk {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if free := s.FreeDisk[n]; minDisk > 0 && free >= 0 && free < minDisk {
			out = append(out, fmt.Sprintf("disk: the %s folder's file system has %s free, less than %s", n, sandbox.SizeText(free), sandbox.SizeText(minDisk)))
		}
	}
	if minFDs > 0 && s.FreeFDs >= 0 && s.FreeFDs < minFDs {
		out = append(out, fmt.Sprintf("descriptors: %d of %d file descriptors free, less than %d", s.FreeFDs, s.LimitFDs, minFDs))
	}
	return out
}

// Degraded reads the headroom and says what is short (Short).
func (m *Monitor) Degraded() []string { return m.Short(m.Read()) }
