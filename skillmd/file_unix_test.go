//go:build unix

package skillmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/skillmd"
)

// A FIFO named as a skill file does not block ParseFile, with or without
// a writer; a device does not run it forever; a link is followed, as any
// path the user names.
func TestParseFileSpecial(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fifo := filepath.Join(root, "fifo", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := skillmd.ParseFile(fifo, skillmd.Options{}); skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), fifo) {
		t.Errorf("FIFO without a writer: %v", err)
	}
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that writes nothing
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, _, err := skillmd.ParseFile(fifo, skillmd.Options{}); skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), fifo) {
		t.Errorf("FIFO with a silent writer: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, _, err := skillmd.ParseFile("/dev/zero", skillmd.Options{}); skilld.ErrorCode(err) != skilld.ETOOLARGE || !strings.Contains(err.Error(), "/dev/zero") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	p := putSkill(t, root, "real", []byte("---\nname: linked\ndescription: d\n---\nBody\n"))
	link := filepath.Join(root, "linked", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if s, _, err := skillmd.ParseFile(link, skillmd.Options{}); err != nil || s.Name != "linked" {
		t.Errorf("link: %+v, %v", s, err)
	}
}
