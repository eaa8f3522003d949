package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/skilld/skilld/pack"
)

// Tasks activating the same package at once share one cached copy; run
// with -race, since the losers read the entry the winner is building.
func TestSkillCacheConcurrentCopy(t *testing.T) {
	var files []pack.File
	for i := range 50 {
		files = append(files, pack.File{Path: fmt.Sprintf("data/f%02d.txt", i), Data: []byte(fmt.Sprint(i))})
	}
	pkg, err := pack.New(files, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c := &SkillCache{Dir: t.TempDir()}
	dirs := make([]string, 8)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Go(func() {
			e, err := c.copyFrom(pkg)
			if err != nil {
				t.Error(err)
				return
			}
			dirs[i] = e.dir
		})
	}
	wg.Wait()
	for _, d := range dirs {
		if d == "" || d != dirs[0] {
			t.Fatalf("cached copies %q, want one", dirs)
		}
	}
}

// A cached copy whose files changed is rebuilt before it is used again.
func TestSkillCacheRebuildsChangedCopy(t *testing.T) {
	pkg, err := pack.New([]pack.File{{Path: "SKILL.md", Data: []byte("original")}}, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c := &SkillCache{Dir: t.TempDir()}
	e, err := c.copyFrom(pkg)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(e.dir, "SKILL.md")
	if err := os.Chmod(f, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("changed by a task"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := c.copyFrom(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if again == e {
		t.Error("the changed entry was used again")
	}
	if b, err := os.ReadFile(filepath.Join(again.dir, "SKILL.md")); err != nil || string(b) != "original" {
		t.Errorf("rebuilt copy: %q, %v", b, err)
	}
}
