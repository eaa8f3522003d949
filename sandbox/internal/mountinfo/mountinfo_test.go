package mountinfo

import (
	"strings"
	"testing"
)

const sample = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
35 22 0:30 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
36 22 7:0 / /tmp/a\040b/workspace rw,nosuid,nodev,noatime - ext4 /dev/loop0 rw,noinit_itable
broken line
37 22 0:31 /sub /mnt/x\134y rw - tmpfs tmpfs rw
`

func TestParse(t *testing.T) {
	got := Parse([]byte(sample))
	want := []Mount{
		{Root: "/", Point: "/", FSType: "ext4", Super: "rw"},
		{Root: "/", Point: "/sys/fs/cgroup/memory", FSType: "cgroup", Super: "rw,memory"},
		{Root: "/", Point: "/tmp/a b/workspace", FSType: "ext4", Super: "rw,noinit_itable"},
		{Root: "/sub", Point: `/mnt/x\y`, FSType: "tmpfs", Super: "rw"},
	}
	if len(got) != len(want) {
		t.Fatalf("Parse = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if table, err := Read(); err != nil || len(table) == 0 {
		t.Errorf("Read: %d mounts, %v", len(table), err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range Parse([]byte(s)) {
			if strings.Contains(m.Point, "\n") {
				t.Errorf("a mount point spans lines: %q", m.Point)
			}
		}
	})
}
