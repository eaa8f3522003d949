package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeadroomFlags: a threshold that cannot be read is a usage error
// naming the flag, before anything is opened or created.
func TestHeadroomFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--min-free-disk", "lots"}, "--min-free-disk"},
		{[]string{"--min-free-fds", "-3"}, "--min-free-fds -3"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		code, _, errOut := runCLI(t, append([]string{"serve", "--data", data}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.says) {
			t.Errorf("serve %q: exit %d\n%s", c.args, code, errOut)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("serve %q created %s", c.args, data)
		}
	}
	m, err := (&headroomFlags{disk: "off", fds: 0}).monitor("/d", "/w")
	if err != nil || m.MinFreeDisk != -1 || m.MinFreeFDs != -1 || m.Paths["data"] != "/d" || m.Paths["work"] != "/w" {
		t.Errorf("off and 0: %+v %v", m, err)
	}
}
