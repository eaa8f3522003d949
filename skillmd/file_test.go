package skillmd_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
)

// putSkill writes data as dir/SKILL.md under root and
// returns its path.
func putSkill(t testing.TB, root, dir string, data []byte) string {
	t.Helper()
	p := filepath.Join(root, dir, "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sized is a valid SKILL.md of exactly n bytes (n ≥ 64).
func sized(n int) []byte {
	head := "---\nname: sized\ndescription: A skill of a chosen size.\n---\n"
	body := []byte(strings.Repeat("Instructions, one line after another.\n", n/38+1))
	return append([]byte(head), body[:n-len(head)]...)
}

// sameAsParse checks that ParseFile of path, holding data in the folder
// dir, gives what Parse gives of data with the folder's name to match:
// the skill, the warnings, and the error with the path before its message.
func sameAsParse(t *testing.T, path, dir string, data []byte, opts skillmd.Options) {
	t.Helper()
	got, gotWarn, gotErr := skillmd.ParseFile(path, opts)
	if opts.Dir == "" {
		opts.Dir = dir
	}
	want, wantWarn, wantErr := skillmd.Parse(data, opts)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotWarn, wantWarn) {
		t.Fatalf("%s: ParseFile gives %+v %v, Parse %+v %v", path, got, gotWarn, want, wantWarn)
	}
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: ParseFile error %v, Parse error %v", path, gotErr, wantErr)
	}
	if gotErr == nil {
		return
	}
	var ge, we *skilld.Error
	if !errors.As(gotErr, &ge) || !errors.As(wantErr, &we) {
		t.Fatalf("%s: untyped errors %v, %v", path, gotErr, wantErr)
	}
	if ge.Code != we.Code || ge.Message != path+": "+we.Message || !reflect.DeepEqual(ge.Details, we.Details) || !errors.Is(gotErr, skillmd.ErrInvalid) {
		t.Fatalf("%s: ParseFile error %+v, Parse error %+v", path, ge, we)
	}
}

// TestParseFileAsParse: ParseFile reads a file whole, whatever its size
// around the sizes it reads in, and parses it as Parse parses its bytes,
// matching the skill's name with its folder's.
func TestParseFileAsParse(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	examples, _ := filepath.Glob("../examples/skills/*/SKILL.md")
	if len(examples) == 0 {
		t.Fatal("no examples")
	}
	for _, m := range examples {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Base(filepath.Dir(m))
		sameAsParse(t, m, dir, data, skillmd.Options{})
		sameAsParse(t, putSkill(t, root, "other", data), "other", data, skillmd.Options{})
		sameAsParse(t, putSkill(t, root, "other", data), "other", data, skillmd.Options{Dir: dir})
	}
	for _, n := range []int{64, 4095, 4096, 8191, 8192, 8193, 16384, 32767, 32768, 32769, 65537, 1 << 20} {
		sameAsParse(t, putSkill(t, root, "sized", sized(n)), "sized", sized(n), skillmd.Options{})
	}
	for _, data := range [][]byte{
		[]byte("\uFEFF---\r\nname: crlf\r\ndescription: d\r\n---\r\nBody\r\n"),
		[]byte("---\nname: crlf\ndescription: d\nx-extra: 1\n---\n"),
		[]byte("---\nname: Crlf\ndescription: d\n---\n"),
		[]byte("no frontmatter"),
		[]byte("---\nname: crlf\ndescription: \xff\n---\n"),
		{},
	} {
		p := putSkill(t, root, "crlf", data)
		sameAsParse(t, p, "crlf", data, skillmd.Options{})
		sameAsParse(t, p, "crlf", data, skillmd.Options{Lenient: true})
	}
}

// A skill file named without a folder has no folder name to match; one
// under ".." is not compared with "..".
func TestParseFileBareName(t *testing.T) {
	root := t.TempDir()
	data := []byte("---\nname: bare\ndescription: d\n---\nBody\n")
	putSkill(t, root, "elsewhere", data)
	t.Chdir(filepath.Join(root, "elsewhere"))
	for _, p := range []string{"SKILL.md", "./SKILL.md", "../elsewhere/SKILL.md"} {
		s, _, err := skillmd.ParseFile(p, skillmd.Options{})
		switch {
		case p == "../elsewhere/SKILL.md":
			if err == nil || !strings.Contains(err.Error(), "Directory name 'elsewhere' must match skill name 'bare'") {
				t.Errorf("%s: %v", p, err)
			}
		case err != nil || s.Name != "bare" || s.Body != "Body":
			t.Errorf("%s: %+v, %v", p, s, err)
		}
	}
	t.Chdir("..")
	if err := os.WriteFile(filepath.Join(root, "SKILL.md"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir("elsewhere")
	if s, _, err := skillmd.ParseFile("../SKILL.md", skillmd.Options{}); err != nil || s.Name != "bare" {
		t.Errorf("../SKILL.md: %+v, %v", s, err)
	}
}

// Every file ParseFile cannot read is a typed error naming it.
func TestParseFileErrors(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	code := func(err error) string { return skilld.ErrorCode(err) }
	missing := filepath.Join(root, "none", "SKILL.md")
	if _, _, err := skillmd.ParseFile(missing, skillmd.Options{}); code(err) != skilld.ENOTFOUND || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing: %v (%s)", err, code(err))
	}
	folder := filepath.Join(root, "folder", "SKILL.md")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := skillmd.ParseFile(folder, skillmd.Options{}); code(err) != skilld.EINVALID || !strings.Contains(err.Error(), folder) {
		t.Errorf("folder: %v (%s)", err, code(err))
	}
	under := filepath.Join(putSkill(t, root, "file", []byte("x")), "SKILL.md")
	if _, _, err := skillmd.ParseFile(under, skillmd.Options{}); code(err) != skilld.EINVALID || !strings.Contains(err.Error(), under) {
		t.Errorf("under a file: %v (%s)", err, code(err))
	}
	// Over the limit (a sparse file, not written byte by byte), and at it.
	for _, n := range []int64{skillmd.MaxFileSize + 1, skillmd.MaxFileSize + 1<<20} {
		p := putSkill(t, root, "large", sized(1024))
		if err := os.Truncate(p, n); err != nil {
			t.Fatal(err)
		}
		if _, _, err := skillmd.ParseFile(p, skillmd.Options{}); code(err) != skilld.ETOOLARGE || !strings.Contains(err.Error(), p) {
			t.Errorf("%d bytes: %v (%s)", n, err, code(err))
		}
	}
	atLimit := putSkill(t, root, "sized", sized(skillmd.MaxFileSize))
	if s, _, err := skillmd.ParseFile(atLimit, skillmd.Options{}); err != nil || len(s.Body) < skillmd.MaxFileSize-100 {
		t.Errorf("%d bytes: %v", skillmd.MaxFileSize, err)
	}
	if skillmd.MaxFileSize != pack.ArchiveMaxFileSize {
		t.Errorf("MaxFileSize %d, a package's file may hold %d", skillmd.MaxFileSize, pack.ArchiveMaxFileSize)
	}
}
