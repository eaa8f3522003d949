package headroom_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/skilld/skilld/internal/headroom"
)

// TestHeadroom: a real folder's free space and the process's descriptors
// are read; thresholds above them make the monitor degraded, naming
// what is short, and below them it is not.
func TestHeadroom(t *testing.T) {
	dir := t.TempDir()
	m := &headroom.Monitor{Paths: map[string]string{"data": dir}}
	s := m.Read()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if s.FreeDisk["data"] <= 0 || s.LimitFDs <= 0 || s.FreeFDs <= 0 || s.FreeFDs >= s.LimitFDs {
		t.Fatalf("sample %+v", s)
	}
	// Opening files takes descriptors away.
	var files []*os.File
	for range 10 {
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if after := m.Read(); after.FreeFDs > s.FreeFDs-10 {
		t.Errorf("free descriptors %d with 10 more open, %d before", after.FreeFDs, s.FreeFDs)
	}
	for _, f := range files {
		f.Close()
	}
	if got := m.Short(s); len(got) != 0 {
		t.Errorf("with room: %q", got)
	}
	tight := &headroom.Monitor{Paths: m.Paths, MinFreeDisk: s.FreeDisk["data"] * 2, MinFreeFDs: s.LimitFDs + 1}
	got := tight.Short(s)
	if len(got) != 2 || !strings.HasPrefix(got[0], "disk: the data folder's file system has ") || !strings.HasPrefix(got[1], "descriptors: ") {
		t.Errorf("short of both: %q", got)
	}
	off := &headroom.Monitor{Paths: m.Paths, MinFreeDisk: -1, MinFreeFDs: -1}
	if got := off.Short(headroom.Sample{FreeDisk: map[string]int64{"data": 0}, FreeFDs: 0, LimitFDs: 10}); len(got) != 0 {
		t.Errorf("thresholds turned off: %q", got)
	}
}
