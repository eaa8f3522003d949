package pack_test

import (
	"fmt"

	"github.com/skilld/skilld/pack"
)

func ExampleNew() {
	p, err := pack.New([]pack.File{
		{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho hi\n"), Exec: true},
		{Path: "SKILL.md", Data: []byte("# Hello\n")},
	}, pack.InlineLimits())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(p.Manifest()))
	fmt.Println(p.Digest())

	_, err = pack.New([]pack.File{{Path: "../evil.sh"}}, pack.InlineLimits())
	fmt.Println(err)
	// Output:
	// 100644 8 90f8ec5669cd34183b9b0fdf8b94f5efb4c3672876330f4aa76088c2b4ad17be SKILL.md
	// 100755 18 299001868fb8c02fd431c336c6d058f5558c5dff5b5af5e6fe04b870a6a9cbba scripts/run.sh
	// sha256:ef7f32a97987391392fde74ace05eba1c8e6ce35eda50255ff5d0ea11bce6797
	// path "../evil.sh" has a ".." segment; paths must stay inside the package
}
