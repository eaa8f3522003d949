package sandbox_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/sandbox"
)

func TestEnv(t *testing.T) {
	got := sandbox.MergeEnv(sandbox.BaseEnv(), []string{"LANG=de_DE.UTF-8", "EXTRA=1"})
	joined := strings.Join(got, " ")
	if !strings.Contains(joined, "LANG=de_DE.UTF-8") || strings.Contains(joined, "LANG=C.UTF-8") || !strings.HasSuffix(joined, "EXTRA=1") {
		t.Errorf("MergeEnv = %q", got)
	}
	if err := sandbox.CheckEnv([]string{"OK_1=x=y", "_A=", "LDFLAGS=-L.", "MALLOC=1", "TMPDIR=/tmp/x", "TMPDIR=/workspace/t", "PATH=/workspace/bin:/usr/bin"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "=x", "1A=x", "A B=x", "A", "A=\x00", "LD_PRELOAD=/workspace/p.so", "LD_X=1", "MALLOC_ARENA_MAX=1", "GLIBC_TUNABLES=x", "GCONV_PATH=/workspace",
		"NLSPATH=x", "BASH_ENV=x", "TMPDIR=/etc", "TMPDIR=tmp", "TMPDIR=/tmp/../etc", "TMPDIR=/workspacex"} {
		if sandbox.CheckEnv([]string{bad}) == nil {
			t.Errorf("CheckEnv(%q) passed", bad)
		}
	}
}
