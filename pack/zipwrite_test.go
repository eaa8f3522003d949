package pack_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"testing"

	"github.com/skilld/skilld/pack"
)

// TestWriteZipReproducible: the same files in any order give the same
// bytes, which read back as the files (modes included) through the
// package's own zip reader.
func TestWriteZipReproducible(t *testing.T) {
	files := []pack.File{
		{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho hi\n"), Exec: true},
		{Path: "SKILL.md", Data: []byte("---\nname: demo\ndescription: A demo.\n---\n\n# demo\n")},
		{Path: "references/a.md", Data: []byte("# A\n")},
	}
	var first, second bytes.Buffer
	if err := pack.WriteZip(&first, files); err != nil {
		t.Fatal(err)
	}
	reversed := []pack.File{files[2], files[1], files[0]}
	if err := pack.WriteZip(&second, reversed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatal("the same files in another order zip to other bytes")
	}
	zr, err := zip.NewReader(bytes.NewReader(first.Bytes()), int64(first.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 3 || zr.File[0].Name != "SKILL.md" || zr.File[2].Name != "scripts/run.sh" || zr.File[2].Mode().Perm() != 0o755 || zr.File[0].Mode().Perm() != 0o644 {
		t.Errorf("entries: %v", zr.File)
	}
	pkg, err := pack.ReadZip(t.Context(), bytes.NewReader(first.Bytes()), int64(first.Len()), pack.Limits{})
	if err != nil {
		t.Fatalf("the package's own reader refuses the archive: %v", err)
	}
	want, err := pack.New(files, pack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Digest() != want.Digest() {
		t.Errorf("the archive reads back as %s, want %s", pkg.Digest(), want.Digest())
	}
}

func TestWriteZipDuplicatePath(t *testing.T) {
	err := pack.WriteZip(&bytes.Buffer{}, []pack.File{{Path: "SKILL.md"}, {Path: "SKILL.md"}})
	if !errors.Is(err, pack.ErrPathCollision) {
		t.Errorf("duplicate path: %v", err)
	}
}
