package clientdirs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skilld/skilld"
)

const digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func sampleLock() *Lockfile {
	src := Source{Server: "http://127.0.0.1:8080", Workspace: "default"}
	return &Lockfile{Version: 1, Skills: []Skill{
		{Name: "zeta", ID: "sk_2", Version: 3, Digest: digestA, Source: src,
			Targets: []Placement{{Target: "claude", Folder: ".claude/skills/zeta"}, {Target: "agents", Folder: ".agents/skills/zeta"}}},
		{Name: "alpha", ID: "sk_1", Version: 1, Digest: digestA, Source: src,
			Targets: []Placement{{Target: "skills", Folder: "skills/alpha"}}},
	}}
}

// The lockfile written is sorted, stable and reads back as what was
// written; writing it again changes nothing on disk.
func TestLockfileRoundTrip(t *testing.T) {
	data, err := sampleLock().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "lockfile_version": 1,
  "skills": [
    {
      "name": "alpha",
      "id": "sk_1",
      "version": 1,
      "digest": "` + digestA + `",
      "source": {
        "server": "http://127.0.0.1:8080",
        "workspace": "default"
      },
      "targets": [
        {
          "target": "skills",
          "folder": "skills/alpha"
        }
      ]
    },
    {
      "name": "zeta",`
	if !strings.HasPrefix(string(data), want) || !strings.Contains(string(data), `".agents/skills/zeta"`) ||
		strings.Index(string(data), ".agents/skills/zeta") > strings.Index(string(data), ".claude/skills/zeta") {
		t.Fatalf("marshalled lockfile:\n%s", data)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Marshal()
	if err != nil || !bytes.Equal(again, data) {
		t.Errorf("marshal(parse(x)) differs from x (%v):\n%s", err, again)
	}
	if l.Find("zeta") == nil || l.Find("zeta").Version != 3 || l.Find("nope") != nil {
		t.Errorf("Find: %+v", l.Find("zeta"))
	}

	root := t.TempDir()
	if _, exists, err := ReadLockfile(root); err != nil || exists {
		t.Fatalf("no lockfile yet: exists %v, %v", exists, err)
	}
	if err := WriteLockfile(root, sampleLock()); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, LockfileName)
	onDisk, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(onDisk, data) {
		t.Fatalf("on disk (%v):\n%s", err, onDisk)
	}
	before, _ := os.Stat(p)
	if err := WriteLockfile(root, l); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(p); !os.SameFile(before, after) {
		t.Error("writing the same lockfile again replaced the file")
	}
	read, exists, err := ReadLockfile(root)
	if err != nil || !exists || !reflect.DeepEqual(read, l) {
		t.Errorf("ReadLockfile = %+v, %v, %v", read, exists, err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("the lockfile's folder holds %d entries, want only the lockfile", len(entries))
	}
}

// Parse refuses what it would not write, naming the field and why.
func TestParseRefuses(t *testing.T) {
	valid := func(edit func(m map[string]any)) string {
		data, _ := sampleLock().Marshal()
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	skill := func(m map[string]any) map[string]any { return m["skills"].([]any)[0].(map[string]any) }
	target := func(m map[string]any) map[string]any { return skill(m)["targets"].([]any)[0].(map[string]any) }
	for _, tc := range []struct{ name, doc, want string }{
		{"not JSON", "{", "not a valid lockfile"},
		{"trailing data", `{"lockfile_version":1,"skills":[]} {}`, "something follows"},
		{"unknown field", `{"lockfile_version":1,"skills":[],"extra":1}`, `unknown field "extra"`},
		{"no version", `{"skills":[]}`, "lockfile_version is missing"},
		{"newer version", `{"lockfile_version":2,"skills":[]}`, "written by a newer skilld"},
		{"negative version", `{"lockfile_version":-1,"skills":[]}`, "lockfile_version is -1"},
		{"bad name", valid(func(m map[string]any) { skill(m)["name"] = "Bad Name" }), "skills[0].name"},
		{"dot name", valid(func(m map[string]any) { skill(m)["name"] = ".." }), "skills[0].name"},
		{"no id", valid(func(m map[string]any) { skill(m)["id"] = "" }), "skills[0].id"},
		{"version 0", valid(func(m map[string]any) { skill(m)["version"] = 0 }), "skills[0].version"},
		{"bad digest", valid(func(m map[string]any) { skill(m)["digest"] = "sha256:ABC" }), "skills[0].digest"},
		{"file server", valid(func(m map[string]any) { skill(m)["source"].(map[string]any)["server"] = "file:///etc" }), "skills[0].source.server"},
		{"no workspace", valid(func(m map[string]any) { skill(m)["source"].(map[string]any)["workspace"] = "" }), "skills[0].source.workspace"},
		{"no targets", valid(func(m map[string]any) { skill(m)["targets"] = []any{} }), "skills[0].targets is empty"},
		{"escaping folder", valid(func(m map[string]any) { target(m)["folder"] = "../../home/alpha" }), "skills[0].targets[0].folder"},
		{"absolute folder", valid(func(m map[string]any) { target(m)["folder"] = "/home/x/alpha" }), "skills[0].targets[0].folder"},
		{"another skill's folder", valid(func(m map[string]any) { target(m)["folder"] = "skills/zeta" }), "skills[0].targets[0].folder"},
		{"folder is the name alone", valid(func(m map[string]any) { target(m)["folder"] = "alpha" }), "skills[0].targets[0].folder"},
		{"backslash", valid(func(m map[string]any) { target(m)["folder"] = `skills\..\alpha` }), "skills[0].targets[0].folder"},
		{"no target name", valid(func(m map[string]any) { target(m)["target"] = "" }), "skills[0].targets[0].target"},
		{"folder twice", valid(func(m map[string]any) {
			skill(m)["targets"] = append(skill(m)["targets"].([]any), map[string]any{"target": "x", "folder": "skills/alpha"})
		}), "skills[0].targets[1].folder"},
		{"name twice", valid(func(m map[string]any) {
			zeta := m["skills"].([]any)[1].(map[string]any)
			zeta["name"], zeta["targets"] = "alpha", []any{map[string]any{"target": "claude", "folder": ".claude/skills/alpha"}}
		}), `skills[1].name "alpha" is listed twice`},
	} {
		_, err := Parse([]byte(tc.doc))
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse = %v, want an invalid error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestReadLockfileErrors(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, LockfileName), []byte(`{"lockfile_version":1,"skills":[{"name":"x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, exists, err := ReadLockfile(root); !exists || skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), root) {
		t.Errorf("a bad lockfile: exists %v, %v; want an invalid error naming its folder", exists, err)
	}
	big := bytes.Repeat([]byte(" "), maxLockfileSize+1)
	if err := os.WriteFile(filepath.Join(root, LockfileName), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadLockfile(root); skilld.ErrorCode(err) != skilld.ETOOLARGE {
		t.Errorf("an 8 MiB lockfile: %v", err)
	}
	// A lockfile that would not parse back is not written.
	bad := sampleLock()
	bad.Skills[0].Digest = "nope"
	if err := WriteLockfile(t.TempDir(), bad); skilld.ErrorCode(err) != skilld.EINVALID {
		t.Errorf("writing an invalid lockfile: %v", err)
	}
}
