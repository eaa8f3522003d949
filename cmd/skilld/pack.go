package main

import (
	"context"
	"encoding/json"
	"fmt"
)

func runPack(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "pack", "[--json] PATH\n\n"+
		"Reads a skill directory or archive as a package and prints its content\n"+
		"digest and manifest (docs/PACKAGE-FORMAT.md describes both).")
	asJSON := fs.Bool("json", false, "print the digest and file list as JSON")
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(paths) != 1 {
		return usageErrorf(fs, "want exactly one PATH, got %d", len(paths))
	}
	src := resolveSources(ctx, paths[0])
	if len(src) != 1 {
		fmt.Fprintf(e.stderr, "skilld pack: %s holds %d skills; name one of them\n", paths[0], len(src))
		return exitFailure
	}
	p, _, err := src[0].load(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld pack: %s: %s\n", src[0].path, errorText(err))
		return exitFailure
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
