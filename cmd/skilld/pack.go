package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
)

func runPack(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "pack", "[--json | --manifest] PATH\n\n"+
		"Reads a skill directory or archive as a package and prints its content\n"+
		"digest and manifest (docs/PACKAGE-FORMAT.md describes both).")
	asJSON := fs.Bool("json", false, "print the digest and file list as JSON")
	onlyManifest := fs.Bool("manifest", false, "print only the manifest: the bytes a signature on the package signs")
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(paths) != 1 {
		return usageErrorf(fs, "want exactly one PATH, got %d", len(paths))
	}
	src := resolveSources(ctx, paths[0])
	if s, ok := missingPath(src); ok {
		return usageErrorf(fs, "%s does not exist", s.path)
	}
	if len(src) != 1 {
		dirs := make([]string, len(src))
		for i, s := range src {
			dirs[i] = s.dir
		}
		fmt.Fprintf(e.stderr, "skilld pack: %s\n", severalSkills(paths[0], dirs,
			fmt.Sprintf("name one of them (skilld pack %s)", filepath.Join(paths[0], filepath.FromSlash(dirs[0])))))
		return exitFailure
	}
	p, _, err := src[0].load(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld pack: %s: %s\n", src[0].path, errorText(err))
		return exitFailure
	}
	// An archive of several skills is no skill's package: say so, as
	// for the folder they came from, rather than print a digest nothing
	// will ever have.
	if dirs := p.SkillDirs(); src[0].archive && len(dirs) > 1 {
		fmt.Fprintf(e.stderr, "skilld pack: %s\n", severalSkills(paths[0], dirs, "pack them one by one, from their folders"))
		return exitFailure
	}
	if *onlyManifest {
		e.stdout.Write(p.Manifest())
		return exitOK
	}
	if !*asJSON {
		fmt.Fprintln(e.stdout, p.Digest())
		e.stdout.Write(p.Manifest())
		return exitOK
	}
	type file struct {
		Path   string `json:"path"`
		Size   int64  `json:"size"`
		Digest string `json:"digest"`
		Exec   bool   `json:"exec"`
	}
	out := struct {
		Path   string `json:"path"`
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
		Files  []file `json:"files"`
	}{Path: src[0].path, Digest: p.Digest(), Size: p.Size(), Files: []file{}}
	for _, en := range p.Entries() {
		out.Files = append(out.Files, file(en))
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(e.stderr, "skilld pack: %v\n", err)
		return exitFailure
	}
	return exitOK
}
