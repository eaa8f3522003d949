package bwrap

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestEtcGenerations: a generation is made again only when a source
// changes (or appears), and an old one is removed once the last command
// using it has ended, so generations do not pile up.
func TestEtcGenerations(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	write("hosts", "one\n")
	if err := os.Mkdir(filepath.Join(src, "ssl"), 0o755); err != nil {
		t.Fatal(err)
	}
	var entries []etcEntry
	for _, n := range []string{"hosts", "ssl", "later"} {
		entries = append(entries, etcEntry{name: n, src: filepath.Join(src, n), bind: filepath.Join(src, n), follow: true})
	}
	v, err := newEtcView(dir, entries, []ownFile{{"passwd", []byte("p\n")}})
	if err != nil {
		t.Fatal(err)
	}
	gens := func() []string {
		es, _ := os.ReadDir(v.base)
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	args1, release1, err := v.acquire()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--ro-bind", filepath.Join(v.base, "0"), "/etc", "--ro-bind", filepath.Join(src, "ssl"), "/etc/ssl"}; !slices.Equal(args1, want) {
		t.Errorf("args %q, want %q", args1, want)
	}
	g0 := filepath.Join(v.base, "0")
	if b, _ := os.ReadFile(filepath.Join(g0, "hosts")); string(b) != "one\n" {
		t.Errorf("hosts: %q", b)
	}
	if info, err := os.Stat(filepath.Join(g0, "hosts")); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("hosts keeps its mode: %v %v", info.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(g0, "passwd")); string(b) != "p\n" {
		t.Errorf("passwd: %q", b)
	}
	args2, release2, _ := v.acquire()
	if !slices.Equal(args1, args2) {
		t.Errorf("unchanged sources made a new generation: %q", args2)
	}
	write("hosts", "two\n")
	args3, release3, _ := v.acquire()
	if slices.Equal(args3, args1) {
		t.Fatal("a changed source kept the generation")
	}
	if b, _ := os.ReadFile(filepath.Join(v.base, "1", "hosts")); string(b) != "two\n" {
		t.Errorf("new hosts: %q", b)
	}
	release1()
	release1() // twice is once
	if got := gens(); !slices.Equal(got, []string{"0", "1"}) {
		t.Errorf("generation 0 is still in use: %q", got)
	}
	release2()
	if got := gens(); !slices.Equal(got, []string{"1"}) {
		t.Errorf("after the last release of generation 0: %q", got)
	}
	write("later", "appeared\n")
	_, release4, _ := v.acquire()
	if b, _ := os.ReadFile(filepath.Join(v.base, "2", "later")); string(b) != "appeared\n" {
		t.Errorf("an entry that appears: %q", b)
	}
	release3()
	release4()
	if got := gens(); !slices.Equal(got, []string{"2"}) {
		t.Errorf("generations left: %q", got)
	}
	v.close()
	if _, err := os.Stat(v.base); !os.IsNotExist(err) {
		t.Errorf("close left %s: %v", v.base, err)
	}
}
